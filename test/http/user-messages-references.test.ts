// user_messages' references to messages and users, checked once per statement since
// migration 0206 (docs/DECISIONS.md, "user_messages without row-level foreign keys"):
// deleting messages takes their rows along, and a row for a message or a user that does
// not exist in its organization is refused, as the foreign keys did.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { sendDm, sendTo, subscribe } from './message-flags.fixture.ts';

let server: TestServer;
let alice: Client;
let bob: Client;
let carol: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  await subscribe(alice, 'Denmark', [alice, bob, carol]);
});
after(() => server.close());

const rowsOf = async (ids: number[]) =>
  (
    await server.svc.db
      .selectFrom('user_messages')
      .select(['message_id', 'user_id'])
      .where('message_id', 'in', ids)
      .orderBy('message_id')
      .orderBy('user_id')
      .execute()
  ).map((r) => `${r.message_id}:${r.user_id}`);

const insertRow = (realmId: number, userId: number, messageId: number) =>
  sql`insert into user_messages (realm_id, user_id, message_id, flags) values (${realmId}::integer, ${userId}::integer, ${messageId}::integer, 0)`.execute(
    server.svc.db,
  );

const refused = async (work: Promise<unknown>) => assert.rejects(work, (e: { code?: string }) => e.code === '23503');

test('deleting messages deletes their rows, one message or many in one statement', async () => {
  const ids = [
    await sendTo(alice, 'Denmark', 'gone'),
    await sendTo(bob, 'Denmark', 'gone'),
    await sendDm(alice, [carol]),
    await sendTo(carol, 'Denmark', 'kept'),
  ];
  const [one, two, dm, kept] = ids;
  assert.equal((await rowsOf(ids)).length, 3 + 3 + 2 + 3);
  assert.equal((await alice.delete(`/messages/${one}`)).status, 200);
  assert.deepEqual(await rowsOf([one]), []);
  await server.svc.db.deleteFrom('messages').where('id', 'in', [two, dm]).execute();
  assert.deepEqual(await rowsOf([one, two, dm]), []);
  assert.deepEqual(await rowsOf([kept]), [`${kept}:${alice.id}`, `${kept}:${bob.id}`, `${kept}:${carol.id}`]);
});

test('a row for a message or a user that does not exist in its organization is refused', async () => {
  const id = await sendTo(alice, 'Denmark', 'refs');
  const realmId = 1;
  const other = await server.createOrganization('elsewhere');
  await refused(insertRow(realmId, alice.id, id + 1000));
  await refused(insertRow(realmId, 99999, id));
  // The other organization's user, and this organization's message claimed for the other.
  await refused(insertRow(realmId, other.id, id));
  await refused(insertRow(other.realmId, other.id, id));
  // One bad row refuses the whole statement.
  await sql`delete from user_messages where message_id = ${id}`.execute(server.svc.db);
  await refused(
    sql`insert into user_messages (realm_id, user_id, message_id, flags)
        select ${realmId}::integer, u, ${id}::integer, 0 from unnest(${[alice.id, bob.id, 99999]}::integer[]) u`.execute(server.svc.db),
  );
  assert.deepEqual(await rowsOf([id]), []);
  await insertRow(realmId, bob.id, id);
  assert.deepEqual(await rowsOf([id]), [`${id}:${bob.id}`]);
  // A statement that inserts nothing checks nothing.
  await sql`insert into user_messages (realm_id, user_id, message_id, flags) select 1, 1, 1, 0 where false`.execute(server.svc.db);
});

test('a message deleted while a row for it is being added: the row goes too, or is refused', async () => {
  const { db } = server.svc;
  // The row added first: the delete waits for its commit (the message is locked for key share) and takes it.
  const first = await sendTo(alice, 'Denmark', 'race');
  await sql`delete from user_messages where message_id = ${first} and user_id = ${carol.id}`.execute(db);
  let added!: () => void;
  const inserted = new Promise<void>((resolve) => (added = resolve));
  const adding = db.transaction().execute(async (tx) => {
    await sql`insert into user_messages (realm_id, user_id, message_id, flags) values (1, ${carol.id}::integer, ${first}::integer, 0)`.execute(tx);
    added();
    await new Promise((r) => setTimeout(r, 100));
  });
  await inserted;
  await db.deleteFrom('messages').where('id', '=', first).execute();
  await adding;
  assert.deepEqual(await rowsOf([first]), []);

  // The delete first: the row waits for it, then finds no message.
  const second = await sendTo(alice, 'Denmark', 'race');
  let deleted!: () => void;
  const gone = new Promise<void>((resolve) => (deleted = resolve));
  const deleting = db.transaction().execute(async (tx) => {
    await tx.deleteFrom('messages').where('id', '=', second).execute();
    deleted();
    await new Promise((r) => setTimeout(r, 100));
  });
  await gone;
  await refused(insertRow(1, carol.id, second));
  await deleting;
  assert.deepEqual(await rowsOf([second]), []);
});
