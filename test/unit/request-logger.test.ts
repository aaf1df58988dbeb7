import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { lazyRequestLogger } from '../../src/http/request-logger.ts';

test("a request's logger is made when it first logs, with the request id bound", async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, stream), disableRequestLogging: true, childLoggerFactory: lazyRequestLogger });
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (req) => {
    req.log.warn({ what: 'x' }, 'something');
    req.log.info('again');
    return { ok: true };
  });
  await app.ready();
  // Requests' loggers are children of the server's.
  let children = 0;
  const log = app.log as unknown as { child: (...args: unknown[]) => unknown };
  const child = log.child;
  log.child = function (this: unknown, ...args: unknown[]) {
    children++;
    return child.apply(this, args);
  };
  const before = children;
  assert.equal((await app.inject('/quiet')).statusCode, 200);
  assert.equal(children, before, 'no child for a request that does not log');
  assert.equal((await app.inject('/loud')).statusCode, 200);
  assert.equal(children, before + 1, 'one child, made once');
  await new Promise((r) => setImmediate(r));
  const logged = lines.filter((l) => l.msg === 'something' || l.msg === 'again');
  assert.equal(logged.length, 2);
  assert.ok(logged.every((l) => typeof l.reqId === 'string' && l.reqId === logged[0].reqId));
  assert.equal(logged[0].what, 'x');
  assert.equal(logged[0].level, 40);
  await app.close();
});
