// The credential cache (src/auth/credential-cache.ts): a burst of requests with one
// key reads it once, and nothing read before a change is remembered after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CredentialCache } from '../../src/auth/credential-cache.ts';
import { loadConfig } from '../../src/config.ts';
import { LocalEventBus } from '../../src/events/bus.ts';
import { QueueRegistry } from '../../src/events/queues.ts';
import type { Notice } from '../../src/events/types.ts';
import type { Realm } from '../../src/realm/tables.ts';
import type { User } from '../../src/users/tables.ts';

const user = { id: 5, realm_id: 1 } as User;
const realm = { id: 1 } as Realm;

function slowRead() {
  const pending: (() => void)[] = [];
  const read = () => new Promise<{ user: User; realm: Realm }>((resolve) => pending.push(() => resolve({ user, realm })));
  return {
    read,
    reads: () => pending.length,
    finish: () => {
      for (const f of pending) f();
    },
  };
}

test('concurrent misses of one key share one read', async () => {
  const cache = new CredentialCache(5_000);
  const r = slowRead();
  const loads = Array.from({ length: 50 }, () => cache.load('k', r.read));
  r.finish();
  const results = await Promise.all(loads);
  assert.equal(r.reads(), 1);
  for (const { found, stamp } of results) cache.set('k', found!.user, found!.realm, stamp);
  assert.equal(cache.get('k')?.user, user);
});

test('a change during a read: the read is not remembered, and later misses read again', async () => {
  const cache = new CredentialCache(5_000);
  const r = slowRead();
  const before = cache.load('k', r.read);
  cache.observe({ realmId: 1, users: [], event: { type: 'realm_user', op: 'update', person: { user_id: 5, is_active: false } } } as unknown as Notice);
  const after = cache.load('k', r.read);
  assert.equal(r.reads(), 2, 'a request after the change does not join the older read');
  r.finish();
  const { found, stamp } = await before;
  cache.set('k', found!.user, found!.realm, stamp);
  assert.equal(cache.get('k'), undefined, 'read before the change: not remembered');
  await after;
});

test('the default lifetime: long where every change reaches the cache, 5 s on PostgreSQL without a broker', () => {
  const pg = 'postgres://x@127.0.0.1/db';
  assert.equal(loadConfig({}, {}).credentialCacheMs, 600_000);
  assert.equal(loadConfig({}, { DATABASE_URL: pg, BROKER_URL: 'redis://127.0.0.1' }).credentialCacheMs, 600_000);
  assert.equal(loadConfig({}, { DATABASE_URL: pg }).credentialCacheMs, 5000);
  assert.equal(loadConfig({ databaseUrl: pg }, {}).credentialCacheMs, 5000);
  assert.equal(loadConfig({}, { DATABASE_URL: pg, CREDENTIAL_CACHE_MS: '100' }).credentialCacheMs, 100);
  assert.equal(loadConfig({ credentialCacheMs: 7 }, {}).credentialCacheMs, 7);
});

test('notices missed (a lost broker): the bus tells the cache to forget every entry', () => {
  const cache = new CredentialCache(600_000);
  const bus = new LocalEventBus(new QueueRegistry());
  bus.onMissed(() => cache.clear());
  cache.set('k', user, realm);
  assert.equal(cache.get('k')?.user, user);
  bus.missed();
  assert.equal(cache.get('k'), undefined);
});
