// One user's renders cannot occupy the render workers (issue 12): renders
// queue per key, keys take turns, and a key has at most size - 1 workers.
// Slow renders are stood in for by RenderPool.hold, not by timing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RenderPool } from '../../../src/markdown/index.ts';

test('with one worker, another user waits for at most the render that runs', async () => {
  const pool = new RenderPool({ size: 1 });
  try {
    await pool.render('warm up', {});
    const hold = pool.hold((content) => content.startsWith('A'));
    const done: string[] = [];
    const track = (p: Promise<unknown>, label: string) => p.then(() => done.push(label));
    const a = [1, 2, 3].map((i) => track(pool.render(`A${i}`, {}, 'user-a'), `A${i}`));
    await hold.reached;
    const b = track(pool.render('B1', {}, 'user-b'), 'B1');
    // A1 holds the only worker; A2 and A3 were there first, yet B1 goes next.
    hold.release();
    await Promise.all([...a, b]);
    assert.deepEqual(done, ['A1', 'B1', 'A2', 'A3']);
  } finally {
    await pool.close();
  }
});

test('with more workers, one user never takes them all', async () => {
  const pool = new RenderPool({ size: 2 });
  try {
    await Promise.all([pool.render('warm up', {}, 'x'), pool.render('warm up', {}, 'y')]);
    const hold = pool.hold((content) => content.startsWith('A'));
    const a = [1, 2, 3, 4].map((i) => pool.render(`A${i}`, {}, 'user-a'));
    await hold.reached;
    // A's renders are all stuck, but B's render runs on the worker A may not take.
    const b = await pool.render('**B**', {}, 'user-b');
    assert.equal(b.html, '<p><strong>B</strong></p>');
    hold.release();
    await Promise.all(a);
  } finally {
    await pool.close();
  }
});
