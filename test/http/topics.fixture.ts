// Shared by the topic and typing test files: event queues and channels.
import assert from 'node:assert/strict';
import type { Client } from '../support/server.ts';
import { ok } from './user-groups.fixture.ts';

/** Registers a queue (register parameters in their HTTP form) and returns its id. */
export async function openQueue(c: Client, params: Record<string, unknown> = {}): Promise<string> {
  return ok(await c.post('/register', { fetch_event_types: ['realm'], ...params })).queue_id;
}

/** The events waiting in a queue, without ids and heartbeats. */
export async function eventsOf(c: Client, queueId: string): Promise<Record<string, any>[]> {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, any>[]).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
}

/** Creates a channel with these subscribers (besides its creator) and returns its id. */
export async function createChannel(creator: Client, name: string, subscribers: Client[] = [], params: Record<string, unknown> = {}): Promise<number> {
  ok(await creator.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [creator.id, ...subscribers.map((s) => s.id)], ...params }));
  return ok(await creator.get('/get_stream_id', { stream: name })).stream_id;
}

export async function subscribe(by: Client, name: string, users: Client[]): Promise<void> {
  ok(await by.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: users.map((u) => u.id) }));
}

export async function unsubscribe(by: Client, name: string, users: Client[]): Promise<void> {
  ok(await by.delete('/users/me/subscriptions', { subscriptions: [name], principals: users.map((u) => u.id) }));
}

/** Sends a channel message and returns its id. */
export async function sendTo(c: Client, channel: string, topic: string, content = 'hello'): Promise<number> {
  return ok(await c.post('/messages', { type: 'stream', to: channel, topic, content })).id;
}
