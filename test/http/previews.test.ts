// Previews (issue 18): image previews through the server's image proxy, link
// previews fetched by the embed_links job, links into the organization made
// relative. A local HTTP server plays the rest of the web: images, pages with
// Open Graph tags, slow answers and huge ones. The tests run the job passes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { runDueJobs } from '../../src/jobs/worker.ts';
import { JOB_KINDS } from '../../src/jobs/kinds.ts';
import { realmUrl } from '../../src/realm/queries.ts';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a7f1e4a10000000049454e44ae426082',
  'hex',
);
const HUGE = 3 * 1024 * 1024;

let server: TestServer;
let owner: Client;
let web: http.Server;
let base: string;
const hits: string[] = [];
const held: http.ServerResponse[] = [];

const PAGES: Record<string, (res: http.ServerResponse) => void> = {
  '/img.png': (res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG),
  '/og.html': (res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html><head><title>Ignored</title>
       <meta property="og:title" content="Fish &amp; Chips">
       <meta property="og:description" content='All about "fish"'>
       <meta property="og:image" content="/og.png"></head><body><p>x</p></body></html>`,
    ),
  '/plain.html': (res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Plain page</title><meta name="description" content="A page"></head></html>'),
  '/not-image.png': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<script>alert(1)</script>'),
  '/missing.png': (res) => res.writeHead(404, { 'content-type': 'image/png' }).end(),
  '/missing.html': (res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<title>gone</title>'),
  '/slow.png': (res) => held.push(res),
  '/slow.html': (res) => held.push(res),
  '/huge-declared.png': (res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': HUGE }).end(Buffer.alloc(HUGE)),
  '/huge-streamed.png': (res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.alloc(HUGE));
  },
  '/huge.html': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<meta property="og:title" content="big">${'x'.repeat(HUGE)}`),
};

before(async () => {
  web = http.createServer((req, res) => {
    hits.push(req.url!);
    (PAGES[req.url!] ?? ((r: http.ServerResponse) => r.writeHead(404).end()))(res);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  server = await startTestServer({
    allowPrivateUrls: true,
    previewFetch: { timeoutMs: 800, maxPageBytes: 256 * 1024, maxImageBytes: 1024 * 1024 },
    jobIntervalMs: 3_600_000,
  });
  owner = server.owner;
  const sub = await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }]) });
  assert.equal(sub.status, 200, JSON.stringify(sub.body));
});
after(async () => {
  for (const res of held) res.destroy();
  await server.close();
  web.closeAllConnections();
  await new Promise((resolve) => web.close(resolve));
});

function proxyPath(url: string): string {
  const digest = createHmac('sha1', server.svc.imageProxyKey).update(url).digest('hex');
  return `/external_content/${digest}/${Buffer.from(url).toString('hex')}`;
}

const fetchProxy = (path: string) => server.app.inject({ method: 'GET', url: path });

async function send(content: string, topic = 'previews'): Promise<number> {
  const res = await owner.post('/messages', { type: 'stream', to: 'general', topic, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

async function rendered(id: number): Promise<string> {
  const res = await owner.get(`/messages/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.message.content;
}

async function setRealm(settings: Record<string, boolean>) {
  const res = await owner.patch('/realm', Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, JSON.stringify(v)])));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function pendingJobs(): Promise<number> {
  const rows = await server.svc.db.selectFrom('jobs').select('id').where('kind', '=', 'embed_links').where('failed_at', 'is', null).execute();
  return rows.length;
}

test('an image link shows the reference preview markup through the signed proxy, which streams the image', async () => {
  const url = `${base}/img.png`;
  const id = await send(url);
  assert.equal(await rendered(id), `<div class="message_inline_image"><a href="${url}"><img src="${proxyPath(url)}"></a></div>`);
  const res = await fetchProxy(proxyPath(url));
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/png');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.deepEqual(res.rawPayload, PNG);
});

test('the proxy refuses bad signatures without fetching anything', async () => {
  const url = `${base}/img.png`;
  const good = proxyPath(url);
  hits.length = 0;
  const forged = good.replace(/\/[0-9a-f]+$/, '/' + Buffer.from(`${base}/og.html`).toString('hex'));
  for (const path of [
    forged,
    `/external_content/${'0'.repeat(40)}/${Buffer.from(url).toString('hex')}`,
    '/external_content/zz/41',
    '/external_content/abc/4',
  ]) {
    const res = await fetchProxy(path);
    assert.equal(res.statusCode, 403, path);
    assert.equal(res.body, 'Bad signature');
  }
  assert.deepEqual(hits, []);
});

test('the proxy passes only images, and only within its size and time limits', async () => {
  assert.equal((await fetchProxy(proxyPath(`${base}/not-image.png`))).statusCode, 400);
  assert.equal((await fetchProxy(proxyPath(`${base}/missing.png`))).statusCode, 404);
  assert.equal((await fetchProxy(proxyPath(`${base}/huge-declared.png`))).statusCode, 413);
  const started = Date.now();
  assert.equal((await fetchProxy(proxyPath(`${base}/slow.png`))).statusCode, 504);
  assert.ok(Date.now() - started < 5000, 'the deadline ended the wait');
  // No length announced: the stream stops at the limit, so the reader never gets it all.
  let got = 0;
  try {
    const res = await fetchProxy(proxyPath(`${base}/huge-streamed.png`));
    got = res.rawPayload.length;
  } catch {
    got = 0;
  }
  assert.ok(got <= 1024 * 1024 + 64 * 1024, `received ${got} bytes`);
});

test('the proxy refuses loopback and private addresses unless ALLOW_PRIVATE_URLS', async () => {
  server.svc.config.allowPrivateUrls = false;
  try {
    hits.length = 0;
    for (const url of [`${base}/img.png`, 'http://169.254.169.254/latest/meta-data.png', 'http://[::1]/x.png', 'http://10.0.0.1/x.png']) {
      assert.equal((await fetchProxy(proxyPath(url))).statusCode, 404, url);
    }
    assert.deepEqual(hits, []);
  } finally {
    server.svc.config.allowPrivateUrls = true;
  }
});

test('inline_image_preview off: image links stay plain links', async () => {
  await setRealm({ inline_image_preview: false });
  try {
    const url = `${base}/img.png`;
    assert.equal(await rendered(await send(url)), `<p><a href="${url}">${url}</a></p>`);
  } finally {
    await setRealm({ inline_image_preview: true });
  }
});

test('links into the organization are relative, as the reference renders them', async () => {
  const org = realmUrl(await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow(), server.config);
  const id = await send(`[here](${org}/#narrow/channel/1-general) and ${org}/#narrow/dm/1 and [out](https://example.com/#narrow)`);
  assert.equal(
    await rendered(id),
    `<p><a href="#narrow/channel/1-general">here</a> and <a href="#narrow/dm/1">${org}/#narrow/dm/1</a> and <a href="https://example.com/#narrow">out</a></p>`,
  );
});

test('link previews are off by default: no job', async () => {
  const before = await pendingJobs();
  await send(`${base}/og.html`);
  assert.equal(await pendingJobs(), before);
});

test('with inline_url_embed_preview, a job fetches the Open Graph data and re-renders with a rendering_only update_message', async () => {
  await setRealm({ inline_url_embed_preview: true });
  try {
    const viewer = await registerViewer(server, owner);
    const url = `${base}/og.html`;
    const id = await send(`see ${url}`);
    const first = `<p>see <a href="${url}">${url}</a></p>`;
    assert.equal(await rendered(id), first);
    assert.equal(await pendingJobs(), 1);
    await runDueJobs(server.svc, JOB_KINDS);
    assert.equal(await pendingJobs(), 0);
    const image = `${base}/og.png`;
    const expected =
      first +
      `\n<div class="message_embed"><a class="message_embed_image" href="${url}" style="background-image: url(&quot;${proxyPath(image)}&quot;)"></a>` +
      `<div class="data-container"><div class="message_embed_title"><a href="${url}" title="Fish &amp; Chips">Fish &amp; Chips</a></div>` +
      `<div class="message_embed_description">All about "fish"</div></div></div>`;
    assert.equal(await rendered(id), expected);

    const events = (await owner.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true })).body.events;
    const update = events.find((e: any) => e.type === 'update_message');
    assert.ok(update, JSON.stringify(events));
    assert.equal(update.rendering_only, true);
    assert.equal(update.user_id, null);
    assert.deepEqual(update.message_ids, [id]);
    assert.equal(update.rendered_content, expected);
    assert.equal(update.content, `see ${url}`);
    await expectStateInSync(server, viewer, 'after a link preview');
  } finally {
    await setRealm({ inline_url_embed_preview: false });
  }
});

test('pages that cannot be fetched, are too slow, too big or have no image leave the message as it was', async () => {
  await setRealm({ inline_url_embed_preview: true });
  try {
    const viewer = await registerViewer(server, owner);
    const content = ['missing.html', 'slow.html', 'huge.html', 'plain.html', 'img-less'].map((p) => `${base}/${p}`).join('\n');
    const id = await send(content, 'unfetchable');
    const before = await rendered(id);
    await runDueJobs(server.svc, JOB_KINDS);
    assert.equal(await pendingJobs(), 0);
    assert.equal(await rendered(id), before);
    const events = (await owner.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true })).body.events;
    assert.deepEqual(
      events.filter((e: any) => e.type === 'update_message'),
      [],
    );
  } finally {
    await setRealm({ inline_url_embed_preview: false });
  }
});

test('an edit before the job runs makes the old job moot; the edit queues its own', async () => {
  await setRealm({ inline_url_embed_preview: true });
  try {
    const url = `${base}/og.html`;
    const id = await send(url, 'edited');
    const edit = await owner.patch(`/messages/${id}`, { content: `now ${base}/plain.html` });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.equal(await pendingJobs(), 2);
    await runDueJobs(server.svc, JOB_KINDS);
    // plain.html has no image: no card; og.html's card never lands on the new content.
    assert.equal(await rendered(id), `<p>now <a href="${base}/plain.html">${base}/plain.html</a></p>`);
  } finally {
    await setRealm({ inline_url_embed_preview: false });
  }
});

test('messages from bots get no link previews', async () => {
  await setRealm({ inline_url_embed_preview: true });
  try {
    const bot = await owner.post('/bots', { full_name: 'Preview Bot', short_name: 'previewer', bot_type: 1 });
    assert.equal(bot.status, 200, JSON.stringify(bot.body));
    const botClient = await server.clientFor(bot.body.user_id);
    const before = await pendingJobs();
    const res = await botClient.post('/messages', { type: 'stream', to: 'general', topic: 'bots', content: `${base}/og.html` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await pendingJobs(), before);
  } finally {
    await setRealm({ inline_url_embed_preview: false });
  }
});
