// Fuzzing every route (issue 12, point 8): generated, malformed requests to every
// endpoint of the route table, as every kind of caller (owner, member, guest,
// another organization's owner, nobody). Whatever they send: never a 5xx, always
// the envelope, and the server still answers a normal request afterwards. The
// number of runs is bounded (FUZZ_RUNS, default 300) so that it stays fast.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { apiRoutes } from '../../src/app.ts';
import { ROLE } from '../../src/users/roles.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let server: TestServer;
let callers: Record<string, Client>;
before(async () => {
  server = await startTestServer();
  const channel = await server.owner.post('/channels/create', { name: 'fuzzed', subscribers: [server.owner.id] });
  assert.equal(channel.status, 200);
  await server.owner.post('/messages', { type: 'stream', to: channel.body.id, topic: 'fuzz', content: 'something to act on' });
  callers = {
    owner: server.owner,
    member: await server.createUser({ role: ROLE.MEMBER }),
    guest: await server.createUser({ role: ROLE.GUEST }),
    other: await server.createOrganization('fuzzother'),
    nobody: server.anonymous,
  };
});
after(() => server.close());

// Endpoints that end the caller's own account or session would stop the run, not test it.
const SKIPPED = new Set(['DELETE /users/me']);
const endpoints = [...apiRoutes().endpoints()].filter((e) => !SKIPPED.has(`${e.method} ${e.path}`));

/** Pseudo-random hex text of `length` characters from `seed` (a linear congruential sequence). */
function randomText(seed: number, length: number): string {
  let x = seed >>> 0;
  let out = '';
  while (out.length < length) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
}

const deepJson = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** Malformed values of every kind a parameter might receive. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'true', '[]', '{}', '[null]', '{"a":null}', '-1', '0', '1e308', '-0', 'NaN', '1.5', '"x"', '\u0000', 'a\u0000b'),
  fc.constantFrom(String(2 ** 31), String(2 ** 53 + 1), '9'.repeat(400), deepJson(200), deepJson(6000), '{"a":'.repeat(100)),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.json({ maxDepth: 3 }),
  fc.array(fc.oneof(fc.integer(), fc.constant(-1), fc.constant(2 ** 31)), { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.integer({ min: 1, max: 400 }).map((n) => 'x'.repeat(n * 25)),
  // Long and incompressible, as an index row cannot hold it.
  fc.integer().map((seed) => randomText(seed, 3000)),
  fc.constantFrom('😀'.repeat(50), '\u202e\u0301\ufeff', '<script>alert(1)</script>', "'; drop table users; --", '%00', '../../etc/passwd'),
);

/** A path parameter: an id, a name, or something that is neither. */
const pathValue = fc.oneof(fc.constantFrom('1', '2', '0', '999999', '2147483648', 'me', 'fuzzed', '%00', '..', '-1'), fc.nat({ max: 50 }).map(String));

const request = fc.record({
  endpoint: fc.constantFrom(...endpoints),
  caller: fc.constantFrom('owner', 'member', 'guest', 'other', 'nobody'),
  pathValues: fc.array(pathValue, { minLength: 3, maxLength: 3 }),
  // Declared parameters get hostile values, and an unknown key sometimes rides along.
  values: fc.array(hostileValue, { minLength: 8, maxLength: 8 }),
  omit: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  extra: fc.option(fc.tuple(fc.string({ maxLength: 10 }), hostileValue)),
});

type Sample = typeof request extends fc.Arbitrary<infer T> ? T : never;

function buildPath(path: string, values: string[]): string {
  let i = 0;
  return path.replace(/\{\w+(:str)?\}/g, () => encodeURIComponent(values[i++ % values.length]!));
}

async function send(s: Sample) {
  const e = s.endpoint;
  const params: Record<string, string> = {};
  e.params.forEach((name, i) => {
    if (!s.omit[i % s.omit.length]) params[name] = s.values[i % s.values.length]!;
  });
  if (s.extra) params[s.extra[0]] = s.extra[1];
  return callers[s.caller]!.request(e.method, buildPath(e.path, s.pathValues), params);
}

test('every route, every caller, malformed input: never 5xx, always the envelope', { timeout: 600_000 }, async () => {
  assert.ok(endpoints.length > 50, `the route table lists ${endpoints.length} endpoints`);
  // Every route once with long, incompressible text in every parameter: a text
  // no index row can hold must be refused (400), never reach the database (500).
  // A fresh owner: a 401 would mean the loop no longer tests anything.
  const owner = await server.createUser({ role: ROLE.OWNER });
  let prev = '';
  for (const e of endpoints.filter((x) => x.path !== '/users/me/api_key/regenerate')) {
    const params = Object.fromEntries(e.params.map((name, i) => [name, randomText(i + 1, 3000)]));
    const res = await owner.request(e.method, buildPath(e.path, [randomText(99, 3000)]), params);
    const label = `owner ${e.method} ${e.path} with long text: ${res.status} ${JSON.stringify(res.body)}`;
    assert.ok(res.status < 500 && res.status !== 401, label + ' after ' + prev);
    prev = `${e.method} ${e.path} ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`;
  }
  await fc.assert(
    fc.asyncProperty(request, async (s) => {
      const res = await send(s);
      const label = `${s.caller} ${s.endpoint.method} ${s.endpoint.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      assert.ok(res.status < 500, label);
      assert.equal(typeof res.body, 'object', label);
      assert.ok(res.body.result === 'success' || res.body.result === 'error', label);
      assert.equal(typeof res.body.msg, 'string', label);
      if (res.body.result === 'error' && res.status !== 405) assert.equal(typeof res.body.code, 'string', label);
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  // Every route once with nothing at all, as every caller, too.
  for (const e of endpoints) {
    for (const caller of Object.keys(callers)) {
      const res = await callers[caller]!.request(e.method, buildPath(e.path, ['1']), {});
      assert.ok(res.status < 500, `${caller} ${e.method} ${e.path} with no parameters: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  // The server still answers normally, to a new user: the run may have
  // deactivated any of the others or regenerated their API keys.
  const fresh = await server.createUser({ role: ROLE.MEMBER });
  const me = await fresh.get('/users/me');
  assert.equal(me.status, 200, JSON.stringify(me.body));
  const sent = await fresh.post('/messages', { type: 'private', to: [fresh.id], content: 'still here' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
});
