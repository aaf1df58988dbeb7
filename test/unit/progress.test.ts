// The operator commands' progress bar: drawn on a terminal, silent elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { terminalProgress } from '../../src/backup/progress.ts';

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & { isTTY: boolean; columns: number };
  let text = '';
  (stream as unknown as PassThrough).on('data', (d: Buffer) => (text += d.toString()));
  stream.isTTY = isTTY;
  stream.columns = 100;
  (stream as unknown as { cursorTo: () => boolean }).cursorTo = () => true;
  (stream as unknown as { clearLine: () => boolean }).clearLine = () => true;
  (stream as unknown as { moveCursor: () => boolean }).moveCursor = () => true;
  return { stream, text: () => text };
}

test('a terminal gets a bar per stage that reaches 100%', async () => {
  const { stream, text } = fakeStream(true);
  const progress = terminalProgress(stream);
  progress.stage('archive', 200);
  progress.advance(150);
  progress.advance(50);
  progress.done();
  await new Promise((r) => setImmediate(r));
  assert.match(text(), /archive/);
  assert.match(text(), /100% 200\/200 B/);
});

test('a pipe or a log gets nothing', async () => {
  const { stream, text } = fakeStream(false);
  const progress = terminalProgress(stream);
  progress.stage('archive', 10);
  progress.advance(10);
  progress.done();
  await new Promise((r) => setImmediate(r));
  assert.equal(text(), '');
});
