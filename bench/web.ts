// Web client benchmark, with a real browser (Debian's Chromium) against a real
// server, for an organization of 1,000 users and 100 channels:
//
// 1. navigation → usable feed (the first messages on screen, the feed idle), median of runs;
// 2. the client's scripts, gzip-compressed (what the first load needs, and in all);
// 3. a channel of 10,000 messages: after scrolling up through pages of history,
//    how many messages the page holds (a windowed list keeps only those near the screen).
//
//   npm run bench -- web          (not in the default run: it seeds and drives a browser)
//   node bench/web.ts [--users 1000] [--channels 100] [--history 10000] [--runs 5]

import { parseArgs } from 'node:util';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { createUserAsOperator } from '../src/users/actions.ts';
import { OWNER_EMAIL, OWNER_PASSWORD } from '../test/support/server.ts';
import { launchBrowser, openPage, signIn, SKIP_REASON, startLiveServer } from '../test/browser/support.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    channels: { type: 'string', default: '100' },
    history: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '5' },
  },
});
const USERS = Number(values.users);
const CHANNELS = Number(values.channels);
const HISTORY = Number(values.history);
const RUNS = Number(values.runs);
const root = new URL('..', import.meta.url).pathname;

if (SKIP_REASON) {
  console.log(SKIP_REASON);
  process.exit(0);
}

// ---- 2: bundle sizes (no server needed).
const dist = join(root, 'web/dist');
const live = await startLiveServer();
const index = readFileSync(join(dist, 'index.html'), 'utf8');
const gz = (file: string) => gzipSync(readFileSync(join(dist, file))).length;
const initial = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
const allJs = readdirSync(join(dist, 'assets'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => `assets/${f}`);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const initialJs = initial.filter((f) => f.endsWith('.js')).reduce((a, f) => a + gz(f), 0);
const initialCss = initial.filter((f) => f.endsWith('.css')).reduce((a, f) => a + gz(f), 0);
const totalJs = allJs.reduce((a, f) => a + gz(f), 0);

// ---- Seed: users, channels (the owner in all), one channel of HISTORY messages.
const { svc } = live.server;
const t0 = performance.now();
const realm = await svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
for (let i = 0; i < USERS; i++)
  await createUserAsOperator(svc, realm, { email: `person${i}@bench.example`, fullName: `Person ${i}`, password: null, role: 400 } as any);
const names = Array.from({ length: CHANNELS }, (_, i) => ({ name: `channel-${String(i).padStart(3, '0')}` }));
await live.server.owner.post('/users/me/subscriptions', { subscriptions: names });
const streams = (await live.server.owner.get('/streams')).body.streams as { name: string; stream_id: number }[];
const history = streams.find((s) => s.name === 'channel-000')!.stream_id;
const owner = live.server.owner.id;
const recipient = (await svc.db.selectFrom('recipients').select('id').where('channel_id', '=', history).executeTakeFirstOrThrow()).id;
await sql`
  insert into messages (realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client)
  select ${realm.id}::integer, ${owner}::integer, ${recipient}::integer, ${history}::integer, 'topic ' || (g % 20),
         'history message ' || g, '<p>history message ' || g || ' with a little <strong>text</strong></p>',
         now() - make_interval(secs => ${HISTORY}::integer - g), 'bench'
  from generate_series(1, ${HISTORY}::integer) g`.execute(svc.db);
await sql`insert into user_messages (realm_id, user_id, message_id, flags)
          select ${realm.id}::integer, ${owner}::integer, id, 1 from messages where channel_id = ${history}::integer
          on conflict do nothing`.execute(svc.db);
await sql`analyze`.execute(svc.db);
const seedSeconds = (performance.now() - t0) / 1000;

// ---- 1: navigation → usable feed.
const browser = await launchBrowser();
const page = await openPage(browser, live);
await signIn(page, live, OWNER_EMAIL, OWNER_PASSWORD);
const usable = async (hash: string) => {
  await page.goto('about:blank');
  const start = performance.now();
  await page.goto(`${live.url}/${hash}`);
  await page.locator('.feed[aria-busy="false"] .msg').first().waitFor();
  return performance.now() - start;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await usable('#feed'); // warm the HTTP cache, as a returning visitor
const feedTimes: number[] = [];
for (let i = 0; i < RUNS; i++) feedTimes.push(await usable('#feed'));
const channelTimes: number[] = [];
for (let i = 0; i < RUNS; i++) channelTimes.push(await usable(`#narrow/channel/${history}`));

// ---- 3: scrolling up through the long channel.
let fetched = 0;
page.on('response', async (r) => {
  if (r.url().includes('/json/messages?')) fetched += ((await r.json().catch(() => ({}))).messages ?? []).length;
});
await usable(`#narrow/channel/${history}`);
const PAGES = 15;
for (let i = 0; i < PAGES; i++) {
  const before = fetched;
  await page.locator('.feed').evaluate((el) => (el.scrollTop = 0));
  const deadline = Date.now() + 20_000;
  while (fetched === before && Date.now() < deadline) await page.waitForTimeout(50);
}
const inDom = await page.locator('.msg').count();
// Where the first load's time goes (the last run of the long channel).
const timing = await page.evaluate(() => {
  const pick = (part: string) =>
    performance
      .getEntriesByType('resource')
      .filter((e) => e.name.includes(part))
      .map((e) => Math.round(e.duration));
  return { register: pick('/json/register'), messages: pick('/json/messages?').slice(0, 1) };
});
await browser.close();
await live.close();

const lines = [
  `organization: ${USERS} users, ${CHANNELS} channels; one channel of ${HISTORY} messages (seeded in ${seedSeconds.toFixed(1)} s)`,
  `navigation → usable feed: combined feed median ${median(feedTimes).toFixed(0)} ms (runs: ${feedTimes.map((t) => t.toFixed(0)).join(', ')}); long channel median ${median(channelTimes).toFixed(0)} ms   goal < 1000 ms`,
  `scripts, gzip: first load ${kb(initialJs)} (+ CSS ${kb(initialCss)}); all scripts incl. the lazy emoji table ${kb(totalJs)}   goal < 150 KB`,
  `long channel after ${PAGES} scrolls to the top: ${fetched} messages fetched, ${inDom} in the page`,
  `first load's requests: /json/register ${timing.register.join(', ')} ms, first /json/messages ${timing.messages.join(', ')} ms; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
];
console.log(lines.join('\n'));
writeFileSync(join(root, 'bench/results/web.txt'), `${lines.join('\n')}\n`);
