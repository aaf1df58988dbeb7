// The linkifier cache (src/linkifiers/cache.ts): a change drops the organization's entry,
// and a read that began before a change is not remembered after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LinkifierCache } from '../../src/linkifiers/cache.ts';
import type { Notice } from '../../src/events/types.ts';
import type { Linkifier } from '../../src/markdown/index.ts';

const changed = (realmId: number) => ({ realmId, users: [], event: { type: 'realm_linkifiers', realm_linkifiers: [] } }) as unknown as Notice;
const one: Linkifier[] = [{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.example/{id}' }];

test('remembered until its organization changes them', async () => {
  const cache = new LinkifierCache(5_000);
  let reads = 0;
  const read = async () => {
    reads++;
    return one;
  };
  await cache.get(1, read);
  await cache.get(1, read);
  await cache.get(2, read);
  assert.equal(reads, 2);
  cache.observe(changed(2));
  await cache.get(1, read);
  assert.equal(reads, 2, 'another organization changed');
  cache.observe(changed(1));
  await cache.get(1, read);
  assert.equal(reads, 3);
});

test('a read under way when a change arrives is not remembered', async () => {
  const cache = new LinkifierCache(5_000);
  let finish = () => {};
  const slow = cache.get(1, () => new Promise<Linkifier[]>((resolve) => (finish = () => resolve(one))));
  cache.observe(changed(1));
  finish();
  assert.equal(await slow, one);
  let reads = 0;
  await cache.get(1, async () => {
    reads++;
    return [];
  });
  assert.equal(reads, 1);
});

test('a TTL of 0 remembers nothing', async () => {
  const cache = new LinkifierCache(0);
  let reads = 0;
  for (let i = 0; i < 2; i++)
    await cache.get(1, async () => {
      reads++;
      return one;
    });
  assert.equal(reads, 2);
});
