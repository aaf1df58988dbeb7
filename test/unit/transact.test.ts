// transact(): one transaction, events after the commit, and a lost race run again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transact } from '../../src/db/transact.ts';
import { RaceLostError } from '../../src/db/errors.ts';
import type { Notice } from '../../src/events/types.ts';

/** A database whose transactions just run their work; what was published is kept. */
function fakeServices() {
  const published: Notice[][] = [];
  const db = { transaction: () => ({ execute: <T>(work: (tx: unknown) => Promise<T>) => work({}) }) };
  return { svc: { db, events: { publish: (n: readonly Notice[]) => void published.push([...n]) } } as never, published };
}

test('a lost race runs the work again, and only the last run publishes', async () => {
  const { svc, published } = fakeServices();
  let runs = 0;
  const result = await transact(svc, async (_tx, emit) => {
    runs++;
    emit(1, { type: 'alert_words', alert_words: [`run ${runs}`] }, [7]);
    if (runs === 1) throw new RaceLostError('rows changed under the work');
    return 'done';
  });
  assert.equal(result, 'done');
  assert.equal(runs, 2);
  assert.deepEqual(
    published.map((batch) => batch.map((n) => (n.event.type === 'alert_words' ? n.event.alert_words : null))),
    [[['run 2']]],
  );
});

test('any other error is not retried, and nothing is published', async () => {
  const { svc, published } = fakeServices();
  let runs = 0;
  await assert.rejects(
    transact(svc, async () => {
      runs++;
      throw new Error('a real failure');
    }),
    /a real failure/,
  );
  assert.equal(runs, 1);
  assert.equal(published.length, 0);
});
