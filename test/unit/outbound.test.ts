// The outbound client's address rules and its checks on every hop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { embeddedIpv4, isPrivateAddress, outboundRequest, OutboundError } from '../../src/net/outbound.ts';

test('private, loopback, link-local, unspecified and multicast addresses are refused', () => {
  for (const address of [
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    'not an address',
  ]) {
    assert.equal(isPrivateAddress(address), true, address);
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808']) {
    assert.equal(isPrivateAddress(address), false, address);
  }
});

test('IPv4 inside IPv6', () => {
  assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
  assert.equal(embeddedIpv4('::FFFF:10.0.0.1'), '10.0.0.1');
  assert.equal(embeddedIpv4('2001:db8::1'), undefined);
});

let server: http.Server;
let base: string;
before(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/redirect-private') return res.writeHead(302, { location: `http://127.0.0.2:${(server.address() as AddressInfo).port}/ok` }).end();
    if (req.url === '/redirect-ok') return res.writeHead(303, { location: '/ok' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (req.url === '/big') return res.end('x'.repeat(10_000));
    if (req.url === '/slow') return; // never answers
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => res.end(`${req.method} ${body}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OutboundError, String(err));
    return err.kind;
  }
  assert.fail('expected a failure');
}

test('loopback is refused by address and by name, unless private URLs are allowed', async () => {
  assert.equal(await failure(outboundRequest({ url: `${base}/ok` }, { allowPrivate: false })), 'refused_address');
  assert.equal(await failure(outboundRequest({ url: base.replace('127.0.0.1', 'localhost') + '/ok' }, { allowPrivate: false })), 'refused_address');
  const res = await outboundRequest({ url: `${base}/ok`, method: 'POST', body: 'hi' }, { allowPrivate: true });
  assert.deepEqual([res.status, res.body.toString()], [200, 'POST hi']);
});

test('every redirect hop is checked again', async () => {
  // Only 127.0.0.2 is refused here: the first hop passes, the redirect to it does not.
  const policy = { allowPrivate: false, isRefused: (a: string) => a === '127.0.0.2' };
  assert.equal(await failure(outboundRequest({ url: `${base}/redirect-private` }, policy)), 'refused_address');
  const followed = await outboundRequest({ url: `${base}/redirect-ok`, method: 'POST', body: 'dropped' }, policy);
  assert.deepEqual([followed.body.toString(), followed.url], ['GET ', `${base}/ok`]);
  assert.equal(await failure(outboundRequest({ url: `${base}/loop` }, policy)), 'too_many_redirects');
});

test('time, size and scheme limits', async () => {
  const open = { allowPrivate: true };
  assert.equal(await failure(outboundRequest({ url: `${base}/slow`, timeoutMs: 200 }, open)), 'timeout');
  assert.equal(await failure(outboundRequest({ url: `${base}/big`, maxBytes: 1000 }, open)), 'too_large');
  assert.equal(await failure(outboundRequest({ url: 'file:///etc/passwd' }, open)), 'bad_url');
  assert.equal(await failure(outboundRequest({ url: 'not a url' }, open)), 'bad_url');
});
