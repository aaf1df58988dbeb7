// KeptReads (src/events/kept-reads.ts): the one mechanism behind the credential, viewer and
// linkifier caches: entries expire, drops reach what they name, and a read begun before a
// drop is not kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptReads } from '../../src/events/kept-reads.ts';

test('through reads once, then answers from what it kept until the entry expires', async (t) => {
  t.mock.timers.enable({ apis: ['Date'] });
  const kept = new KeptReads<number, string>(1_000);
  let reads = 0;
  const read = async () => `read ${++reads}`;
  assert.equal(await kept.through(1, 10, read), 'read 1');
  assert.equal(await kept.through(1, 10, read), 'read 1');
  t.mock.timers.tick(1_001);
  assert.equal(kept.get(1), undefined);
  assert.equal(await kept.through(1, 10, read), 'read 2');
});

test('a drop reaches only the organization or entries it names; a read begun before it is not kept', async () => {
  const kept = new KeptReads<string, number>(60_000);
  kept.set(kept.stamp, 'a', 1, 1);
  kept.set(kept.stamp, 'b', 2, 2);
  kept.dropRealm(1);
  assert.equal(kept.get('a'), undefined);
  assert.equal(kept.get('b'), 2);
  kept.drop((value) => value === 2);
  assert.equal(kept.get('b'), undefined);
  let release = () => {};
  const pending = kept.through('c', 1, () => new Promise<number>((r) => (release = () => r(3))));
  kept.drop();
  release();
  assert.equal(await pending, 3);
  assert.equal(kept.get('c'), undefined, 'read before the drop, so not kept');
});
