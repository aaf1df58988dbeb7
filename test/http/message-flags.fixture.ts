// Shared by the flag and unread test files: channels, messages, and a queue of
// flag events read as a client reads it.
import assert from 'node:assert/strict';
import type { Client } from '../support/server.ts';

export async function subscribe(by: Client, name: string, users: Client[], extra: Record<string, unknown> = {}): Promise<void> {
  const res = await by.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: users.map((u) => u.id), ...extra });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

export async function channelId(c: Client, name: string): Promise<number> {
  return (await c.get('/get_stream_id', { stream: name })).body.stream_id;
}

export async function sendTo(c: Client, channel: string, topic: string, content = 'hello'): Promise<number> {
  const res = await c.post('/messages', { type: 'stream', to: channel, topic, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

export async function sendDm(c: Client, to: Client[], content = 'psst'): Promise<number> {
  const res = await c.post('/messages', { type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

export interface Queue {
  client: Client;
  id: string;
  last: number;
}

/** A queue for `update_message_flags` events (other register parameters in their HTTP form). */
export async function queueFor(client: Client, params: Record<string, unknown> = {}): Promise<Queue> {
  const res = await client.post('/register', { event_types: ['update_message_flags'], ...params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { client, id: res.body.queue_id, last: res.body.last_event_id };
}

/** The events that arrived since the last call, without ids and heartbeats. */
export async function drain(q: Queue): Promise<Record<string, any>[]> {
  const res = await q.client.get('/events', { queue_id: q.id, last_event_id: q.last, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const events = res.body.events as Record<string, any>[];
  if (events.length > 0) q.last = events.at(-1)!.id;
  return events.filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...rest }) => rest);
}

export const readEvent = (messages: number[], all = false) => ({ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages, all });
