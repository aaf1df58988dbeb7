// Shared by the invitation test files: a server with one user of each role (the
// user-group fixture), and helpers to send invitations, read what was stored
// (the links that would be emailed) and see who heard `invites_changed`.
import assert from 'node:assert/strict';
import type { Client, Response, TestServer } from '../support/server.ts';
import { ok, startGroupFixture, type GroupFixture } from './user-groups.fixture.ts';
import { setDailyInvitationLimit } from '../../src/invitations/actions.ts';

export { ok, refused, setRealmSetting } from './user-groups.fixture.ts';

export type InvitationFixture = GroupFixture;

/** The fixture, with a daily limit high enough for a file's tests (the limit's own tests set theirs). */
export async function startInvitationFixture(): Promise<InvitationFixture> {
  const f = await startGroupFixture();
  await setDailyLimit(f.server, 10_000);
  return f;
}

/** The organization's own daily limit (the operator's action); null goes back to the server's. */
export async function setDailyLimit(server: TestServer, limit: number | null): Promise<void> {
  await setDailyInvitationLimit(server.svc, 1, limit);
}

let counter = 0;
/** A fresh address nobody has used. */
export const freshEmail = (prefix = 'new') => `${prefix}${++counter}-${process.pid}@example.org`;

export function invite(client: Client, emails: string | string[], params: Record<string, unknown> = {}): Promise<Response> {
  return client.post('/invites', { invitee_emails: Array.isArray(emails) ? emails.join(',') : emails, stream_ids: [], ...params });
}

/** Every stored invitation row of the organization, oldest first. */
export async function invitationRows(server: TestServer) {
  return server.svc.db.selectFrom('invitations').selectAll().orderBy('id').execute();
}

/** The stored invitation to an address (the newest), as the email would carry it. */
export async function invitationTo(server: TestServer, email: string) {
  const row = await server.svc.db.selectFrom('invitations').selectAll().where('email', '=', email).orderBy('id', 'desc').executeTakeFirst();
  assert.ok(row, `no invitation to ${email}`);
  return row;
}

/** The key in a link `.../join/<key>/`. */
export const tokenOfLink = (link: string): string => /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];

/** The stored invitation a link names. */
export async function invitationByLink(server: TestServer, link: string) {
  return server.svc.db.selectFrom('invitations').selectAll().where('token', '=', tokenOfLink(link)).executeTakeFirstOrThrow();
}

/** Sets organization settings directly (no endpoint changes them yet). */
export async function setRealmSettings(server: TestServer, settings: Record<string, unknown>): Promise<void> {
  const realm = await server.svc.db.selectFrom('realms').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, ...settings }) })
    .where('id', '=', 1)
    .execute();
}

/** Queues that listen for invites_changed, one per client; `heard()` says who got one since the last call. */
export async function invitesChangedListeners(clients: Client[]) {
  const queues = new Map<Client, { queueId: string; last: number }>();
  for (const c of clients) {
    const reg = ok(await c.post('/register', { event_types: ['invites_changed'] }));
    queues.set(c, { queueId: reg.queue_id, last: reg.last_event_id });
  }
  return {
    async heard(): Promise<number[]> {
      const ids: number[] = [];
      for (const [c, q] of queues) {
        const events = ok(await c.get('/events', { queue_id: q.queueId, last_event_id: q.last, dont_block: true })).events;
        if (events.length > 0) q.last = events[events.length - 1].id;
        const changes = events.filter((e: any) => e.type === 'invites_changed');
        for (const e of changes) assert.deepEqual(Object.keys(e).sort(), ['id', 'type']);
        if (changes.length > 0) ids.push(c.id);
      }
      return ids.sort((a, b) => a - b);
    },
    async close(): Promise<void> {
      for (const [c, q] of queues) await c.delete('/events', { queue_id: q.queueId });
    },
  };
}
