// What the scheduled-message and reminder tests share: their people and helpers.
import assert from 'node:assert/strict';
import type { Client, TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

export function ok(res: { status: number; body: any }) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

export function refused(res: { status: number; body: any }, msg: string, status = 400, code = 'BAD_REQUEST') {
  assert.deepEqual({ status: res.status, msg: res.body.msg, code: res.body.code }, { status, msg, code }, JSON.stringify(res.body));
}

let offset = 0;
/** A delivery time a day ahead (distinct per call, so lists have a definite order). */
export const later = () => Math.floor(Date.now() / 1000) + 86400 + ++offset;

/** A member who writes, another who reads, a guest, and Notification Bot's id. */
export async function people(server: TestServer): Promise<{ author: Client; friend: Client; guest: Client; botId: number }> {
  const author = await server.createUser({ email: 'author@example.com', fullName: 'Au Thor' });
  const friend = await server.createUser({ email: 'friend@example.com', fullName: 'Fri End' });
  const guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gue St' });
  const botId = ok(await author.post('/register', { fetch_event_types: ['realm_user'] })).cross_realm_bots[0].user_id;
  return { author, friend, guest, botId };
}

export async function lastMessageOf(c: Client) {
  return ok(await c.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, apply_markdown: false })).messages[0];
}
