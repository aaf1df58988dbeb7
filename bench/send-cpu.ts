// Main-thread CPU of a 50-subscriber channel send, and the render pool's share of it.
//
//   node bench/send-cpu.ts [--sends 300] [--emoji 10]   (PGlite; DATABASE_URL=... for PostgreSQL)
//
// One sender, 50 subscribers each with a parked poll (as bench/messages.ts), in a
// realm with 3 linkifiers and 10 (--emoji) custom emoji; short messages, half with `:emoji:`.
// CPU is process.threadCpuUsage(): the server's thread only (not the render workers).
// Worker.postMessage (the render's transfer to the pool) is timed on its own, in wall time
// (thread CPU has tick granularity): beside the pool.render lines' CPU for the whole round
// trip, what exceeds it is the thread waiting for a core (the woken worker took it), not work.

import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { createUserAsOperator } from '../src/users/actions.ts';
import { ROLE } from '../src/users/roles.ts';
import { benchServer, loadAverage } from './support.ts';
import { renderMarkdown } from '../src/rendering/index.ts';
import { listLinkifiers } from '../src/linkifiers/queries.ts';

const { values } = parseArgs({ options: { sends: { type: 'string', default: '300' }, emoji: { type: 'string', default: '10' } } });
const SENDS = Number(values.sends);
const EMOJI = Number(values.emoji);
const threadCpu = () => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

let postWall = 0;
let posts = 0;
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
  const w = performance.now();
  post.apply(this, args);
  postWall += performance.now() - w;
  posts++;
};

const bench = await benchServer('sendcpu');
const { svc, app } = bench.server;
try {
  const realm = await svc.db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
  await svc.db
    .insertInto('linkifiers')
    .values([
      { realm_id: realm.id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' },
      { realm_id: realm.id, pattern: 'PR(?P<id>[0-9]+)', url_template: 'https://github.com/example/repo/pull/{id}' },
      { realm_id: realm.id, pattern: '(?P<key>[A-Z]{2,5})-(?P<num>[0-9]+)', url_template: 'https://jira.example.com/browse/{key}-{num}' },
    ])
    .execute();
  await svc.db
    .insertInto('realm_emoji')
    .values(
      Array.from({ length: EMOJI }, (_, i) => ({
        realm_id: realm.id,
        name: `emoji_${i}`,
        author_id: null,
        file_name: `${i}-x.png`,
        still_file_name: null,
        date_created: new Date(),
      })),
    )
    .execute();
  const callers: string[] = [];
  const ids: number[] = [];
  for (let i = 0; i < 50; i++) {
    const u = await createUserAsOperator(svc, realm, { email: `u${i}@bench.example`, fullName: `Bench User ${i}`, password: null, role: ROLE.MEMBER });
    callers.push(`Basic ${Buffer.from(`${u.delivery_email}:${u.api_key}`).toString('base64')}`);
    ids.push(u.id);
  }
  const call = async (auth: string, method: 'GET' | 'POST', url: string, params: Record<string, unknown>) => {
    const body = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
    const res = await app.inject({
      method,
      url: method === 'GET' ? `/api/v1${url}?${body}` : `/api/v1${url}`,
      payload: method === 'GET' ? undefined : body,
      headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    });
    if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return JSON.parse(res.body);
  };
  await call(callers[0]!, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'live' }], principals: ids });
  const queues = await Promise.all(
    callers.map(async (auth) => ({
      auth,
      id: (await call(auth, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })).queue_id as string,
      last: -1,
    })),
  );
  const send = async (i: number) => {
    const polls = queues.map((q) => call(q.auth, 'GET', '/events', { queue_id: q.id, last_event_id: q.last }).then((r) => (q.last = r.events.at(-1).id)));
    const content = i % 2 ? `message ${i} with **some** text, see #${i}` : `message ${i} :emoji_${i % 10}: thanks PR${i}`;
    await call(callers[0]!, 'POST', '/messages', { type: 'stream', to: 'live', topic: `t${i % 10}`, content });
    await Promise.all(polls);
  };
  for (let i = 0; i < 50; i++) await send(i);
  postWall = posts = 0;
  const c0 = threadCpu();
  for (let i = 0; i < SENDS; i++) await send(i);
  const perSend = (threadCpu() - c0) / SENDS / 1000;
  console.log(
    `${svc.dbKind}, ${EMOJI} emoji, load ${loadAverage()}: main-thread CPU per send ${perSend.toFixed(3)} ms; postMessage ${((postWall * 1000) / posts).toFixed(1)} µs wall per render (${posts} renders)`,
  );
  // The render alone, N times: resolving the context (its reads) and the pool's round trip.
  const author = await svc.db.selectFrom('users').selectAll().where('id', '=', ids[0]!).executeTakeFirstOrThrow();
  const RENDERS = SENDS * 5;
  for (const content of ['sounds good, see #12 tomorrow', 'nice :emoji_3: :smile:']) {
    const r0 = threadCpu();
    for (let i = 0; i < RENDERS; i++) await renderMarkdown(svc, { realm, content, author });
    console.log(`  renderMarkdown(${JSON.stringify(content)}): ${((threadCpu() - r0) / RENDERS).toFixed(1)} µs main-thread CPU per render`);
  }
  // The pool's round trip alone, with a send's context and with none: what the context's transfer adds.
  const context = {
    server_url: 'http://bench.example',
    image_previews: true,
    image_proxy: { base_url: '/external_content/', key: 'k'.repeat(64) },
    linkifiers: await listLinkifiers(svc.db, realm.id),
  };
  for (const [name, ctx] of [
    ['context', context],
    ['no context', {}],
  ] as const) {
    for (let i = 0; i < 200; i++) await svc.markdown.render('sounds good, see #12 tomorrow', ctx);
    const p0 = threadCpu();
    for (let i = 0; i < RENDERS; i++) await svc.markdown.render('sounds good, see #12 tomorrow', ctx);
    console.log(`  pool.render, ${name}: ${((threadCpu() - p0) / RENDERS).toFixed(1)} µs main-thread CPU per render`);
  }
} finally {
  await bench.close();
}
