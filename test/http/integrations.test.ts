// Incoming webhooks (issue 17.3): the services' recorded payloads
// (test/fixtures/webhooks/<integration>/) become the messages the reference's
// own tests expect (zerver/webhooks/<integration>/tests.py).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: Client;
let bot: { id: number; apiKey: string };
let channelId: number;

before(async () => {
  server = await startTestServer();
  owner = server.owner;
  await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'hooks' }] });
  channelId = (await owner.get('/get_stream_id', { stream: 'hooks' })).body.stream_id;
  const res = await owner.post('/bots', { full_name: 'Hook Bot', short_name: 'hook', bot_type: 2 });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  bot = { id: res.body.user_id, apiKey: res.body.api_key };
});
after(() => server.close());

const fixture = (integration: string, name: string) => readFileSync(new URL(`../fixtures/webhooks/${integration}/${name}`, import.meta.url), 'utf8');

interface Post {
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body: string;
  contentType?: string;
}

async function hook(integration: string, p: Post) {
  const given = Object.entries({ api_key: bot.apiKey, stream: 'hooks', ...p.query }).filter(([, v]) => v !== undefined);
  const query = new URLSearchParams(given as [string, string][]);
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v1/external/${integration}?${query}`,
    payload: p.body,
    headers: { 'content-type': p.contentType ?? 'application/json', ...p.headers },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

/** Posts a fixture and returns the messages it made, oldest first. */
async function messagesOf(integration: string, p: Post) {
  const last = await server.svc.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirstOrThrow();
  const res = await hook(integration, p);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return server.svc.db
    .selectFrom('messages')
    .select(['topic', 'content', 'channel_id', 'sender_id', 'client'])
    .where('id', '>', last.id ?? 0)
    .orderBy('id')
    .execute();
}

async function expectMessage(integration: string, p: Post, topic: string, content: string) {
  const messages = await messagesOf(integration, p);
  assert.equal(messages.length, 1);
  assert.equal(messages[0].sender_id, bot.id);
  assert.equal(messages[0].channel_id, channelId);
  assert.equal(messages[0].topic, topic);
  assert.equal(messages[0].content, content);
}

const GRAPH = 'http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D%29+%3E+15&g0.tab=0';

test('alertmanager', async () => {
  const query = { name: 'topic', desc: 'description' };
  await expectMessage(
    'alertmanager',
    { query, body: fixture('alertmanager', 'alert.json') },
    'andromeda',
    `:alert: **FIRING**\n* CPU core temperature is 34.75C ([source](${GRAPH}))\n* CPU core temperature is 17.625C ([source](${GRAPH}))`,
  );
  await expectMessage(
    'alertmanager',
    { query, body: fixture('alertmanager', 'single_alert.json') },
    'andromeda',
    `:squared_ok: **Resolved** CPU core temperature is 34.75C ([source](${GRAPH}))`,
  );
});

test('grafana, legacy and current alerting', async () => {
  const form = 'application/x-www-form-urlencoded';
  await expectMessage(
    'grafana',
    { body: fixture('grafana', 'alert.json'), contentType: form },
    '[Alerting] Test notification',
    ':alert: **ALERTING**\n\n[Test rule](http://localhost:3000/)\n\nSomeone is testing the alert notification within grafana.\n\n**High value:** 100\n**Higher Value:** 200\n\n[Click to view visualization](https://grafana.com/assets/img/blog/mixed_styles.png)',
  );
  await expectMessage(
    'grafana',
    { body: fixture('grafana', 'alert_new.json'), contentType: form },
    '[RESOLVED:1]',
    ':checkbox: **RESOLVED**\n\nWebhook test message.\n\n---\n**Alert 1**: TestAlert.\n\nThis alert was fired at <time:2022-08-31T05:54:04.52289368Z>.\n\nThis alert was resolved at <time:2022-08-31T10:30:00.52288431Z>.\n\nLabels:\n- alertname: TestAlert\n- instance: Grafana\n\nAnnotations:\n- summary: Notification test\n\n1 alert(s) truncated.',
  );
  const alert = (n: number, name: string, time: string, zone: string, what: string) =>
    `\n---\n**Alert ${n}**: ${name}.\n\nThis alert was fired at <time:${time}>.\nLabels:\n- alertname: ${name}\n- team: blue\n- zone: ${zone}\n\nAnnotations:\n- description: The system has high ${what} usage\n- runbook_url: https://myrunbook.com/runbook/1234\n- summary: This alert was triggered for zone ${zone}\n`;
  await expectMessage(
    'grafana',
    { body: fixture('grafana', 'alert_new_multiple.json'), contentType: form },
    '[FIRING:2]',
    `:alert: **FIRING**\n\nWebhook test message.\n${alert(1, 'High memory usage', '2021-10-12T09:51:03.157076+02:00', 'us-1', 'memory')}\n${alert(2, 'High CPU usage', '2021-10-12T09:56:03.157076+02:00', 'eu-1', 'CPU').trimEnd()}`,
  );
});

test('slack_incoming: text, form payloads, blocks and attachments', async () => {
  // "(no topic)" is the general chat topic here.
  await expectMessage('slack_incoming', { body: fixture('slack_incoming', 'text.json') }, '', 'Hello, world.');
  await expectMessage(
    'slack_incoming',
    { body: fixture('slack_incoming', 'urlencoded_text.txt').trim(), contentType: 'application/x-www-form-urlencoded' },
    'devops',
    ':zap: chris has started deploying project tag v0.0.2rc10 to staging',
  );
  await expectMessage(
    'slack_incoming',
    { body: fixture('slack_incoming', 'blocks.json') },
    '',
    'Danny Torrence left the following review for your property:\n\n[Overlook Hotel](https://example.com) \n :star: \n Doors had too many axe holes, guest in room 237 was far too rowdy, whole place felt stuck in the 1920s.\n\n[Haunted hotel image](https://is5-ssl.mzstatic.com/image/thumb/Purple3/v4/d3/72/5c/d3725c8f-c642-5d69-1904-aa36e4297885/source/256x256bb.jpg)\n\n**Average Rating**\n1.0',
  );
  await expectMessage(
    'slack_incoming',
    { body: fixture('slack_incoming', 'attachment_fields.json') },
    '',
    'Build bla bla succeeded\n\n**Requested by**: Some user\n**Duration**: 00:02:03\n**Build pipeline**: ConsumerAddressModule\n**Title with null value**\n**Title without value**\nValue with null title\nValue without title',
  );
  for (const [input, output] of [
    ['some *foo* word', 'some **foo** word'],
    ['*foo* *bar*', '**foo** **bar**'],
    ['*foo*a*bar*', '*foo*a*bar*'],
    ['some _foo_ word', 'some *foo* word'],
  ]) {
    await expectMessage('slack_incoming', { body: JSON.stringify({ text: input }), query: { topic: 'fmt' } }, 'fmt', output);
  }
  assert.deepEqual(await messagesOf('slack_incoming', { body: JSON.stringify({ text: null }) }), []);
  const missing = await hook('slack_incoming', { body: '', contentType: 'application/x-www-form-urlencoded' });
  assert.deepEqual([missing.status, missing.body.msg], [400, "Missing 'payload' argument"]);
});

test('github: ping, push and issues', async () => {
  const gh = (event: string, name: string, query?: Record<string, string>) => ({ body: fixture('github', name), headers: { 'X-GitHub-Event': event }, query });
  await expectMessage('github', gh('ping', 'ping__organization.json'), 'zulip-test-org', 'GitHub webhook has been successfully configured by eeshangarg.');
  await expectMessage(
    'github',
    gh('push', 'push__delete_branch.json'),
    'public-repo / feature',
    'eeshangarg [deleted](https://github.com/eeshangarg/public-repo/compare/2e8cf535fb38...000000000000) the branch feature.',
  );
  await expectMessage(
    'github',
    gh('issues', 'issues.json'),
    'public-repo / issue #2 Spelling error in the README file',
    "baxterthehacker opened [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nIt looks like you accidently spelled 'commit' with two 't's.\n~~~",
  );
  await expectMessage(
    'github',
    gh('issues', 'issues.json', { topic: 'notifications' }),
    'notifications',
    "baxterthehacker opened [issue #2 Spelling error in the README file](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nIt looks like you accidently spelled 'commit' with two 't's.\n~~~",
  );
  const unsupported = await hook('github', gh('watch', 'issues.json'));
  assert.deepEqual(
    [unsupported.status, unsupported.body.code, unsupported.body.msg],
    [400, 'UNSUPPORTED_WEBHOOK_EVENT_TYPE', "The 'watch' event isn't currently supported by the GitHub webhook; ignoring"],
  );
  const noHeader = await hook('github', { body: fixture('github', 'issues.json') });
  assert.deepEqual(
    [noHeader.status, noHeader.body.code, noHeader.body.msg],
    [400, 'MISSING_HTTP_EVENT_HEADER', "Missing the HTTP event header 'X-GitHub-Event'"],
  );
});

test('gitlab: push and issues, with and without the URL topic', async () => {
  const gl = (event: string, name: string, query?: Record<string, string>) => ({ body: fixture('gitlab', name), headers: { 'X-Gitlab-Event': event }, query });
  const pushed =
    'Tomasz Kolek [pushed](https://gitlab.com/tomaszkolek0/my-awesome-project/-/compare/5fcdd5551fc3085df79bece2c32b1400802ac407...eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9) 2 commits to branch tomek.\n\n* b ([66abd2da288](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/66abd2da28809ffa128ed0447965cf11d7f863a7))\n* c ([eb6ae1e591e](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9))';
  await expectMessage('gitlab', gl('Push Hook', 'push_hook.json'), 'my-awesome-project / tomek', pushed);
  await expectMessage(
    'gitlab',
    gl('Push Hook', 'push_hook.json', { topic: 'Specific topic' }),
    'Specific topic',
    `[[my-awesome-project](https://gitlab.com/tomaszkolek0/my-awesome-project)] ${pushed}`,
  );
  await expectMessage(
    'gitlab',
    gl('Issue Hook', 'issue_hook__issue_closed.json'),
    'my-awesome-project / issue #1 Issue title_new',
    'Tomasz Kolek closed [issue #1](https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1).',
  );
});

test('bad requests get clear errors and send nothing', async () => {
  const count = async () => (await server.svc.db.selectFrom('messages').select('id').execute()).length;
  const before = await count();
  const malformed = await hook('alertmanager', { body: '{"alerts": [{"status": "firing"' });
  assert.deepEqual([malformed.status, malformed.body.msg], [400, 'Malformed JSON']);
  const shapeless = await hook('alertmanager', { body: '{"receiver": "x"}' });
  assert.deepEqual([shapeless.status, shapeless.body.msg], [400, 'Malformed payload: payload["alerts"] is missing']);
  const badStatus = await hook('alertmanager', { body: JSON.stringify({ alerts: [{ status: 'firing', labels: { instance: 'a' } }, { status: 'exploded' }] }) });
  assert.deepEqual([badStatus.status, badStatus.body.msg], [400, "Malformed payload: unknown alert status 'exploded'"]);
  const unknown = await server.app.inject({ method: 'POST', url: `/api/v1/external/nosuch?api_key=${bot.apiKey}`, payload: '{}' });
  assert.equal(unknown.statusCode, 404);
  const noKey = await server.app.inject({
    method: 'POST',
    url: '/api/v1/external/grafana?stream=hooks',
    payload: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.deepEqual([noKey.statusCode, JSON.parse(noKey.body).msg], [400, "Missing 'api_key' argument"]);
  const badKey = await hook('grafana', { body: fixture('grafana', 'alert.json'), query: { api_key: 'x'.repeat(32) } });
  assert.deepEqual([badKey.status, badKey.body.msg], [401, 'Invalid API key']);
  const noChannel = await hook('grafana', { body: fixture('grafana', 'alert.json'), query: { stream: 'nowhere' } });
  assert.deepEqual([noChannel.status, noChannel.body.code], [400, 'STREAM_DOES_NOT_EXIST']);
  assert.equal(await count(), before);
});

test('the channel by id, Basic authentication, and no channel: a direct message to the owner', async () => {
  const basic = `Basic ${Buffer.from(`hook-bot@confab.test:${bot.apiKey}`).toString('base64')}`;
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v1/external/grafana?stream=${channelId}`,
    payload: fixture('grafana', 'alert.json'),
    headers: { authorization: basic, 'content-type': 'application/json' },
  });
  assert.equal(res.statusCode, 200, res.body);
  const [byId] = await server.svc.db.selectFrom('messages').select(['channel_id', 'client']).orderBy('id', 'desc').limit(1).execute();
  assert.deepEqual(byId, { channel_id: channelId, client: 'ZulipGrafanaWebhook' });

  const dms = await messagesOf('grafana', { body: fixture('grafana', 'alert.json'), query: { stream: undefined } as never });
  assert.equal(dms.length, 1);
  assert.equal(dms[0].channel_id, null);
  const readers = await server.svc.db.selectFrom('user_messages').select('user_id').orderBy('message_id', 'desc').limit(2).execute();
  assert.ok(readers.some((r) => r.user_id === owner.id));
});
