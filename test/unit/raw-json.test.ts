// Answers with members kept as JSON text (src/http/raw-json.ts) and the user list kept
// serialized for register (src/users/list-cache.ts): the bytes are those JSON.stringify
// would write for the same values, whatever is spliced where.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RawJson, hasRawMember, rawArray, serializeMembers } from '../../src/http/raw-json.ts';
import { EntryList, KeptUserList, UserListCache } from '../../src/users/list-cache.ts';
import type { Executor } from '../../src/db/schema.ts';
import type { Notice } from '../../src/events/types.ts';

const raw = (value: unknown) => new RawJson([Buffer.from(JSON.stringify(value))]);

test('serializeMembers writes what JSON.stringify writes, raw members spliced in place', () => {
  const users = [
    { user_id: 1, full_name: 'Zoë «quoted» "name"' },
    { user_id: 2, full_name: '日本' },
  ];
  const members = { result: 'success', msg: '', skipped: undefined, realm_users: raw(users), n: 3, nested: { a: [1, null] }, last: raw([]) };
  const expected = JSON.stringify({ ...members, realm_users: users, last: [] });
  assert.equal(serializeMembers(members).toString('utf8'), expected);
  assert.equal(hasRawMember(members), true);
  assert.equal(hasRawMember({ a: 1, b: [raw(1)] }), false, 'only top-level members are spliced');
  // Anywhere else, a RawJson is the value it stands for.
  assert.equal(JSON.stringify({ deep: [raw({ x: 'y' })] }), '{"deep":[{"x":"y"}]}');
});

test('rawArray joins entries into one JSON array; an empty one is []', () => {
  const items = [{ a: 1 }, { b: 'é' }, { c: [] }].map((v) => Buffer.from(JSON.stringify(v)));
  assert.deepEqual(rawArray(items).parse(), [{ a: 1 }, { b: 'é' }, { c: [] }]);
  assert.equal(Buffer.concat(rawArray([]).chunks).toString(), '[]');
});

test('EntryList: each entry found by user id, and one replaced without touching the others', () => {
  const entries: [number, string][] = [
    [3, JSON.stringify({ user_id: 3, full_name: 'Åsa' })],
    [7, JSON.stringify({ user_id: 7, full_name: '李' })],
    [9, JSON.stringify({ user_id: 9, full_name: 'plain' })],
  ];
  const list = new EntryList(entries);
  assert.deepEqual(
    JSON.parse(list.json.toString()),
    entries.map(([, j]) => JSON.parse(j)),
  );
  for (const [id, json] of entries) assert.equal(list.entry(id)?.toString(), json);
  assert.equal(list.entry(4), undefined);
  const replaced = list.replacing(7, JSON.stringify({ user_id: 7, full_name: 'me', delivery_email: 'me@x' }));
  assert.deepEqual(replaced.parse(), [
    { user_id: 3, full_name: 'Åsa' },
    { user_id: 7, full_name: 'me', delivery_email: 'me@x' },
    { user_id: 9, full_name: 'plain' },
  ]);
  assert.deepEqual(list.replacing(4, '{}').parse(), JSON.parse(list.json.toString()), 'a user not listed changes nothing');
  assert.deepEqual(new EntryList([]).replacing(1, '{}').parse(), []);
});

test('UserListCache keeps an organization list until an event about users in that organization', async () => {
  let reads = 0;
  const cache = new UserListCache(60_000, async () => {
    reads++;
    return new KeptUserList([], new Map());
  });
  const db = {} as Executor;
  const notice = (type: string, realmId: number) => ({ realmId, users: [], event: { type } }) as unknown as Notice;
  await cache.get(db, 1);
  await cache.get(db, 1);
  assert.equal(reads, 1);
  cache.observe(notice('message', 1));
  cache.observe(notice('realm_user', 2));
  await cache.get(db, 1);
  assert.equal(reads, 1, 'other events and other organizations leave it');
  for (const type of ['realm_user', 'realm_bot', 'custom_profile_fields', 'user_settings', 'realm']) {
    cache.observe(notice(type, 1));
    await cache.get(db, 1);
  }
  assert.equal(reads, 6, 'each event about users drops it');
});
