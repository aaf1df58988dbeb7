// Bursts of connections (issue 12, point 5): thousands of clients reconnecting at
// once all get answers. The kernel queues connections the server has not accepted
// yet up to the listen backlog (LISTEN_BACKLOG); Node's default of 511 overflows,
// and the overflow shows as resets. The server's event loop is kept busy while the
// burst arrives, as it is during a restart, so that the queue is what holds them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { startTestServer } from '../support/server.ts';

const CLIENTS = 3000;

/** Opens CLIENTS connections while the event loop is blocked; counts the answers. */
async function burst(port: number): Promise<{ answered: number; failed: Record<string, number> }> {
  let answered = 0;
  const failed: Record<string, number> = {};
  const clients = Array.from(
    { length: CLIENTS },
    () =>
      new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let data = '';
        socket.setTimeout(120_000, () => socket.destroy(new Error('timeout')));
        socket.on('connect', () => socket.write('GET /api/v1/burst HTTP/1.1\r\nHost: confab.test\r\nConnection: close\r\n\r\n'));
        socket.on('data', (chunk) => (data += chunk));
        socket.on('error', (err: NodeJS.ErrnoException) => (failed[err.code ?? err.message] = (failed[err.code ?? err.message] ?? 0) + 1));
        socket.on('close', () => {
          if (/^HTTP\/1\.1 404 /.test(data)) answered++;
          resolve();
        });
      }),
  );
  // Busy, as a server is while it starts: the connections wait in the kernel's queue.
  const until = Date.now() + 500;
  while (Date.now() < until);
  await Promise.all(clients);
  return { answered, failed };
}

/** The backlog the kernel gave the listening socket (ss's Send-Q), when ss is there. */
function kernelBacklog(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    return Number(out.trim().split(/\s+/)[2]);
  } catch {
    return undefined;
  }
}

test('the configured backlog reaches listen, and a burst of connections is all answered', async () => {
  const server = await startTestServer({ host: '127.0.0.1', port: 0, listenBacklog: 4096 });
  try {
    await server.listen();
    const port = (server.app.server.address() as AddressInfo).port;
    const backlog = kernelBacklog(port);
    if (backlog !== undefined) assert.ok(backlog >= 4096 || backlog > 511, `listen backlog ${backlog}`);
    const result = await burst(port);
    assert.deepEqual(result, { answered: CLIENTS, failed: {} });
  } finally {
    await server.close();
  }
});
