// The request conventions every endpoint shares (spec "What the service does", digest section 0).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('success envelope, and unknown parameters listed sorted on success only', async () => {
  const res = await server.owner.get('/users/me', { zebra: 1, apple: 'x' });
  assert.equal(res.status, 200);
  assert.equal(res.body.result, 'success');
  assert.equal(res.body.msg, '');
  assert.deepEqual(res.body.ignored_parameters_unsupported, ['apple', 'zebra']);
  assert.match(String(res.headers['content-type']), /^application\/json/);

  const plain = await server.owner.get('/users/me');
  assert.equal('ignored_parameters_unsupported' in plain.body, false);

  const failed = await server.owner.post('/users', { unknown_param: 1 });
  assert.equal(failed.status, 400);
  assert.equal('ignored_parameters_unsupported' in failed.body, false);
});

test('a missing parameter is REQUEST_VARIABLE_MISSING with var_name', async () => {
  const res = await server.owner.post('/users', { email: 'a@example.com', full_name: 'Aa Bb' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, { result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
});

test('typed parameters are strict JSON and fail with typed BAD_REQUEST messages', async () => {
  const notBool = await server.owner.get('/users', { client_svcavatar: 'True' });
  assert.equal(notBool.status, 400);
  assert.deepEqual(notBool.body, { result: 'error', msg: 'client_svcavatar is not valid JSON', code: 'BAD_REQUEST' });
  const one = await server.owner.get('/users', { client_svcavatar: '1' });
  assert.equal(one.body.msg, 'client_svcavatar is not a boolean');
  const list = await server.owner.get('/users', { user_ids: '5' });
  assert.equal(list.body.msg, 'user_ids is not a list');
  const item = await server.owner.get('/users', { user_ids: '[1,"2"]' });
  assert.equal(item.body.msg, 'user_ids[1] is not an integer');
  const role = await server.owner.patch(`/users/${server.owner.id}`, { role: '"200"' });
  assert.equal(role.body.msg, 'role is not an integer');
});

test('POST reads the query string as a fallback; GET reads only the query string', async () => {
  const res = await server.owner.request('POST', '/users?email=q@example.com&full_name=Query+User&password=secret123');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(typeof res.body.user_id, 'number');
});

test('multipart/form-data bodies work like form-encoded ones', async () => {
  const boundary = '----confabtest';
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const payload = part('email', 'multi@example.com') + part('full_name', 'Multi Part') + part('password', 'secret123') + `--${boundary}--\r\n`;
  const res = await server.app.inject({
    method: 'POST',
    url: '/api/v1/users',
    payload,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`,
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  const created = await server.owner.get(`/users/${JSON.parse(res.body).user_id}`);
  assert.equal(created.body.user.full_name, 'Multi Part');
});

test('a multipart body that does not parse is a 400, and changes nothing', async () => {
  const auth = `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`;
  const before = (await server.owner.get('/users')).body.members.length;
  const bodies: [string, string][] = [
    ['multipart/form-data; boundary=xx', 'garbage'],
    ['multipart/form-data', '--xx\r\n'],
    ['multipart/form-data; boundary=xx', '--xx\r\nContent-Disposition: form-data; name="email"\r\n\r\ncut@example.com'],
  ];
  for (const [type, payload] of bodies) {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/users', payload, headers: { 'content-type': type, authorization: auth } });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(JSON.parse(res.body), { result: 'error', msg: 'Malformed multipart body', code: 'BAD_REQUEST' });
  }
  assert.equal((await server.owner.get('/users')).body.members.length, before);
});

test('405 lists the allowed methods; OPTIONS answers 204 with Allow; HEAD works where GET does', async () => {
  const res = await server.owner.put('/users/me');
  assert.equal(res.status, 405);
  assert.deepEqual(res.body, { result: 'error', msg: 'Method Not Allowed', allowed_methods: ['GET', 'DELETE', 'HEAD'] });
  assert.equal(res.headers.allow, 'GET, DELETE, HEAD');
  assert.equal('code' in res.body, false);

  const options = await server.owner.request('OPTIONS', '/users/me');
  assert.equal(options.status, 204);
  assert.equal(options.headers.allow, 'DELETE, GET, HEAD');
  assert.equal(options.body, '');

  const head = await server.owner.request('HEAD', '/users/me');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('a POST with a `method` field dispatches as that method', async () => {
  const res = await server.owner.post('/users/me', { method: 'GET' });
  assert.equal(res.status, 200);
  assert.equal(res.body.user_id, server.owner.id);
  assert.equal('ignored_parameters_unsupported' in res.body, false);
});

test('unknown routes under /api/v1 get a JSON error', async () => {
  const res = await server.owner.get('/no/such/endpoint');
  assert.equal(res.status, 404);
  assert.equal(res.body.result, 'error');
  assert.equal(res.body.code, 'BAD_REQUEST');
  const nested = await server.owner.get('/users/me/nonexistent/path');
  assert.equal(nested.status, 404);
  assert.equal(nested.body.result, 'error');
  const bare = await server.owner.get('/api/v1');
  assert.equal(bare.status, 404);
  assert.equal(bare.body.result, 'error');
});

test('JSON object bodies are accepted, non-string values as their JSON text', async () => {
  const res = await server.app.inject({
    method: 'GET',
    url: '/api/v1/users',
    headers: { authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}` },
  });
  assert.equal(res.statusCode, 200);
  const post = await server.app.inject({
    method: 'PATCH',
    url: `/api/v1/users/${server.owner.id}`,
    payload: { full_name: 'Owner Renamed' },
    headers: { authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}` },
  });
  assert.equal(post.statusCode, 200, post.body);
  assert.equal((await server.owner.get('/users/me')).body.full_name, 'Owner Renamed');
  const malformed = await server.app.inject({
    method: 'PATCH',
    url: `/api/v1/users/${server.owner.id}`,
    payload: '{not json',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`,
    },
  });
  assert.equal(malformed.statusCode, 400);
  assert.equal(JSON.parse(malformed.body).result, 'error');
});

test('responses are never cached', async () => {
  const res = await server.owner.get('/users/me');
  assert.equal(res.headers['cache-control'], 'max-age=0, no-cache, no-store, must-revalidate, private');
});

test('a value the database cannot store is a 400 BAD_REQUEST, never a 500, and changes nothing', async () => {
  const before = (await server.owner.get('/saved_snippets')).body.saved_snippets.length;
  // No route checks every text for NUL characters; the database refuses them, and so does the answer.
  const nul = await server.owner.post('/saved_snippets', { title: 'a\u0000b', content: 'body' });
  assert.equal(nul.status, 400);
  assert.equal(nul.body.code, 'BAD_REQUEST');
  assert.match(nul.body.msg, /^Invalid value/);
  assert.equal((await server.owner.get('/saved_snippets')).body.saved_snippets.length, before);
  // An organization description with a NUL: refused, and the description stays.
  const description = (await server.owner.get('/server_settings')).body.realm_description;
  const patched = await server.owner.patch('/realm', { description: 'x\u0000y' });
  assert.equal(patched.status, 400);
  assert.equal(patched.body.code, 'BAD_REQUEST');
  assert.equal((await server.owner.get('/server_settings')).body.realm_description, description);
});
