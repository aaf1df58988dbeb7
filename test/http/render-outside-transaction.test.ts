// Slow work never runs inside a transaction (issue 12): while an action's
// render (or password hash) is in progress, no transaction of it is open, so
// other requests go on (on PGlite every request waits for an open
// transaction). RenderPool.hold stands in for a slow render.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type Client, type Response, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let admin: Client;
let channelId: number;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] });
  channelId = (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
});
after(() => server.close());

/** Rejects when `promise` has not settled in a long while: the request is blocked. */
function soon<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    // Long enough for a loaded machine: a request the render blocks never settles.
    timer = setTimeout(() => reject(new Error(`${what} is blocked`)), 60_000);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The transactions of this server's database waiting between two statements. */
async function idleTransactions(): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select pid::text || '@' || xact_start::text as id from pg_stat_activity
    where datname = current_database() and state like 'idle in transaction%'`.execute(server.svc.db);
  return rows.map((r) => r.id);
}

/**
 * Other requests are answered, and (on PostgreSQL) no transaction stays open
 * across the held render. A background job's transaction may be caught between
 * two statements on a loaded machine and ends; one the render holds is still
 * there, the same transaction, for as long as the render is held.
 */
async function othersGoOn(label: string): Promise<void> {
  const me = await soon(server.owner.get('/users/me'), `${label}: GET /users/me`);
  assert.equal(me.status, 200);
  if (server.svc.dbKind === 'postgres') {
    // A job's transaction ends however slow the machine; one the held render keeps stays
    // until the render is released, so it is still there when the wait (bounding a hang) ends.
    let still = await idleTransactions();
    for (let i = 0; i < 100 && still.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await idleTransactions();
      still = still.filter((id) => now.includes(id));
    }
    assert.deepEqual(still, [], `${label}: a transaction is open during the render`);
  }
}

/** Runs `request` while renders of text containing `marker` are held, and checks that others go on. */
async function whileRendering(marker: string, label: string, request: () => Promise<Response>): Promise<Response> {
  const hold = server.svc.markdown.hold((content) => content.includes(marker));
  try {
    const pending = request();
    await soon(Promise.race([hold.reached, pending.then((r) => assert.fail(`${label} ended without rendering: ${JSON.stringify(r.body)}`))]), label);
    await othersGoOn(label);
    hold.release();
    const res = await pending;
    assert.equal(res.status, 200, `${label}: ${JSON.stringify(res.body)}`);
    return res;
  } finally {
    hold.release();
  }
}

test('sending and editing a message render before the transaction', async () => {
  const sent = await whileRendering('slow-send', 'POST /messages', () =>
    admin.post('/messages', { type: 'stream', to: 'Denmark', topic: 't', content: '**slow-send**' }),
  );
  await whileRendering('slow-edit', 'PATCH /messages', () => admin.patch(`/messages/${sent.body.id}`, { content: '*slow-edit*' }));
  const stored = await admin.get(`/messages/${sent.body.id}`);
  assert.equal(stored.body.message.content, '<p><em>slow-edit</em></p>');
});

test('channel and folder descriptions render before the transaction', async () => {
  await whileRendering('slow-create', 'POST /users/me/subscriptions', () =>
    admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Norway', description: '**slow-create**' }] }),
  );
  await whileRendering('slow-update', 'PATCH /streams', () => admin.patch(`/streams/${channelId}`, { description: '**slow-update**' }));
  await whileRendering('slow-channel', 'POST /channels/create', () =>
    admin.post('/channels/create', { name: 'Sweden', description: '**slow-channel**', subscribers: JSON.stringify([admin.id]) }),
  );
  await whileRendering('slow-folder', 'POST /channel_folders/create', () =>
    admin.post('/channel_folders/create', { name: 'Nordics', description: '**slow-folder**' }),
  );
  const denmark = await admin.get(`/streams/${channelId}`);
  assert.equal(denmark.body.stream.rendered_description, '<p><strong>slow-update</strong></p>');
});

test('profile field values render before the transaction', async () => {
  const field = await admin.post('/realm/profile_fields', { name: 'Status', field_type: 1 });
  assert.equal(field.status, 200, JSON.stringify(field.body));
  await whileRendering('slow-profile', 'PATCH /users/me/profile_data', () =>
    admin.patch('/users/me/profile_data', { data: JSON.stringify([{ id: field.body.id, value: '**slow-profile**' }]) }),
  );
  const me = await admin.get(`/users/${admin.id}`, { include_custom_profile_fields: true });
  assert.equal(me.body.user.profile_data[field.body.id].rendered_value, '<p><strong>slow-profile</strong></p>');
});

test('a new account’s password is hashed before the transaction', async () => {
  const hasher = server.svc.passwords;
  let reached!: () => void;
  const hashing = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  server.svc.passwords = {
    ...hasher,
    hash: async (password) => {
      reached();
      await released;
      return hasher.hash(password);
    },
  };
  try {
    const pending = server.owner.post('/users', { email: 'new@example.com', password: 'a-long-password-1', full_name: 'New Person' });
    await soon(hashing, 'POST /users');
    await othersGoOn('POST /users');
    release();
    assert.equal((await pending).status, 200);
  } finally {
    release();
    server.svc.passwords = hasher;
  }
});
