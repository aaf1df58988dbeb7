// Two people chat in two browser contexts: sign-in, live messages, replies,
// reactions, edits, an image upload, search, unread counts, and a reconnect
// after the server restarts. Screenshots of each main screen go to
// test/browser/screenshots/ (ignored by git).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { OWNER_EMAIL, OWNER_PASSWORD } from '../support/server.ts';
import { axeViolations, launchBrowser, openPage, screenshot, signIn, SKIP_REASON, startLiveServer, WAIT, type LiveServer } from './support.ts';

const BOB = { email: 'bob@example.com', password: 'bob-password-1', name: 'Bob Builder' };
const TOPIC = 'launch plan';

let live: LiveServer;
let browser: Browser;
let alice: Page;
let bob: Page;
let general: number;

// One PNG pixel, for the upload.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

before(async () => {
  if (SKIP_REASON) return;
  live = await startLiveServer();
  await live.server.createUser({ email: BOB.email, fullName: BOB.name, password: BOB.password });
  const streams = await live.server.owner.get('/streams');
  general = streams.body.streams.find((s: { name: string }) => s.name === 'general').stream_id;
  browser = await launchBrowser();
  alice = await openPage(browser, live);
  bob = await openPage(browser, live);
});

after(async () => {
  await browser?.close();
  await live?.close();
});

const topicHash = () => `#narrow/channel/${general}-general/topic/${encodeURIComponent(TOPIC).replace(/%20/g, '+')}`;
const channelCount = (page: Page) => page.locator(`.channels li[data-stream-id="${general}"] > a .count`);
const messageWith = (page: Page, text: string) => page.locator('.msg', { hasText: text });

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#compose-textarea', text);
  await page.press('#compose-textarea', 'Enter');
}

test('two people chat live in a browser', { skip: SKIP_REASON, timeout: 15 * 60_000 }, async (t) => {
  await t.test('sign in with the login form (Enter submits)', async () => {
    await alice.goto(`${live.url}/login`);
    await screenshot(alice, 'login');
    // The page's background fills the window, not just the card's height.
    const [auth, viewport] = await Promise.all([alice.locator('.auth').boundingBox(), alice.evaluate(() => window.innerHeight)]);
    assert.ok(auth && auth.height >= viewport, `sign-in background ${auth?.height}px of a ${viewport}px window`);
    await signIn(alice, live, OWNER_EMAIL, OWNER_PASSWORD);
    await signIn(bob, live, BOB.email, BOB.password);
    // A new organization is alive: default channels with their welcome topics.
    await alice.locator('.channels', { hasText: 'general' }).waitFor();
    await alice.locator('.msg').first().waitFor();
    await screenshot(alice, 'combined-feed');
  });

  await t.test('a message in a topic arrives live and counts as unread', async () => {
    await alice.goto(`${live.url}/${topicHash()}`);
    await alice.locator('#view-title', { hasText: TOPIC }).waitFor();
    // Bob reads another channel: general's count rises when Alice writes.
    const sandbox = bob.locator('.channels a', { hasText: 'sandbox' });
    await sandbox.click();
    await bob.locator('#view-title', { hasText: 'sandbox' }).waitFor();
    await bob.locator('.feed[aria-busy="false"]').waitFor();
    const before = Number(
      (await channelCount(bob)
        .textContent({ timeout: 2000 })
        .catch(() => '0')) ?? 0,
    );
    await send(alice, 'Shall we ship on **Friday**? @**Bob Builder**');
    await alice.locator('.msg:not(.local)', { hasText: 'Shall we ship on' }).waitFor();
    await bob.waitForFunction(
      ([sel, n]) => Number(document.querySelector(sel as string)?.textContent ?? 0) === (n as number) + 1,
      [`.channels li[data-stream-id="${general}"] > a .count`, before] as const,
      { timeout: WAIT },
    );
    const mentions = bob.locator('.views a', { hasText: 'Mentions' }).locator('.count');
    assert.equal(await mentions.textContent(), '1');
    await screenshot(bob, 'unread-counts');
    // Opening the topic shows it, with the mention of Bob highlighted, and reads it.
    await bob.goto(`${live.url}/${topicHash()}`);
    const msg = messageWith(bob, 'Shall we ship on');
    await msg.waitFor();
    assert.match((await msg.getAttribute('class')) ?? '', /mentioned/);
    await bob.waitForFunction(() => !document.querySelector('.views a[href="#narrow/is/mentioned"] .count'), undefined, { timeout: WAIT });
    assert.equal(await bob.locator(`.channels li[data-stream-id="${general}"] .topics a`, { hasText: TOPIC }).locator('.count').count(), 0);
  });

  await t.test('Bob replies and Alice sees it live; code and math render', async () => {
    await send(bob, 'Friday works. Checklist:\n```python\ndef ship(x):\n    return x\n```\nand $$e^{i\\pi}+1=0$$');
    const reply = messageWith(alice, 'Friday works');
    await reply.waitFor();
    await reply.locator('.codehilite .k').first().waitFor();
    await reply.locator('.katex').first().waitFor();
    await screenshot(alice, 'topic');
  });

  await t.test('Alice reacts with the emoji picker; Bob sees the reaction', async () => {
    const reply = messageWith(alice, 'Friday works');
    await reply.hover();
    await reply.getByRole('button', { name: 'Add a reaction' }).first().click();
    await alice.fill('#emoji-search', 'tada');
    await alice.locator('.emoji-grid button[aria-label="tada"]').waitFor();
    await screenshot(alice, 'emoji-picker');
    await alice.press('#emoji-search', 'Enter');
    await messageWith(bob, 'Friday works').locator('.reaction', { hasText: '1' }).first().waitFor();
    await messageWith(alice, 'Friday works').locator('.reaction.mine').waitFor();
  });

  await t.test('Bob edits his message; Alice sees the new text marked edited', async () => {
    const mine = messageWith(bob, 'Friday works');
    await mine.hover();
    await mine.getByRole('button', { name: 'Edit' }).click();
    const box = bob.locator('.edit-form textarea');
    await box.waitFor();
    await box.fill('Friday works, after the demo.');
    await box.press('Enter');
    const edited = messageWith(alice, 'after the demo');
    await edited.waitFor();
    await edited.locator('.marker', { hasText: '(edited)' }).waitFor();
  });

  await t.test('Alice uploads an image; Bob sees it', async (t) => {
    const probe = await live.server.owner.post('/user_uploads');
    if (probe.status === 404) return t.skip('this server has no POST /user_uploads yet');
    await alice.setInputFiles('.compose-tools input[type=file]', { name: 'pixel.png', mimeType: 'image/png', buffer: PIXEL });
    await alice.waitForFunction(() => /\]\(\/user_uploads\//.test((document.getElementById('compose-textarea') as HTMLTextAreaElement).value), undefined, {
      timeout: WAIT,
    });
    await alice.press('#compose-textarea', 'Enter');
    await messageWith(bob, 'pixel.png').locator('a[href*="/user_uploads/"]').first().waitFor();
  });

  await t.test('search with operators finds the message', async () => {
    await bob.fill('#search-input', 'channel:general Friday');
    await bob.press('#search-input', 'Enter');
    await bob.locator('#view-title', { hasText: 'Search results' }).waitFor();
    // The query reads as typed: the channel by its name.
    await bob.locator('.view-sub', { hasText: 'channel:general Friday' }).waitFor();
    await messageWith(bob, 'Shall we ship on').waitFor();
    await screenshot(bob, 'search');
  });

  await t.test("the channel's description shows rendered, and follows a change live", async () => {
    await bob.goto(`${live.url}/${topicHash()}`);
    await bob.locator('#view-title', { hasText: TOPIC }).waitFor();
    const res = await live.server.owner.patch(`/streams/${general}`, { description: 'Plans for **launch** :rocket:' });
    assert.equal(res.status, 200);
    const sub = bob.locator('.view-sub');
    await sub.locator('strong', { hasText: 'launch' }).waitFor();
    await sub.locator('.emoji').waitFor();
    assert.ok(!((await sub.textContent()) ?? '').includes('**'));
    // Emoji show as glyphs, as in messages, not as their `:name:` text.
    await bob.waitForFunction(() => document.querySelector('.view-sub')?.textContent?.includes('🚀'), undefined, { timeout: WAIT });
  });

  await t.test('one message toolbar at a time: the hovered one', async () => {
    const messages = bob.locator('.msg:not(.local)');
    assert.ok((await messages.count()) >= 2);
    // The newest message starts selected; pointing at another moves the toolbar there.
    await messages.first().hover();
    assert.equal(await bob.locator('.msg-actions:visible').count(), 1);
    assert.equal(await messages.first().locator('.msg-actions:visible').count(), 1);
  });

  await t.test('after a server restart, both reconnect and the draft survives', async () => {
    await bob.goto(`${live.url}/${topicHash()}`);
    await messageWith(bob, 'Shall we ship on').waitFor();
    await bob.fill('#compose-textarea', 'half-written thought');
    await live.restart();
    await send(alice, 'Back after the restart');
    await messageWith(bob, 'Back after the restart').waitFor({ timeout: 3 * WAIT });
    assert.equal(await bob.inputValue('#compose-textarea'), 'half-written thought');
  });

  await t.test('settings, administration, dark theme and phone width', async () => {
    await alice.getByRole('button', { name: 'Settings' }).click();
    await alice.locator('[role=dialog]', { hasText: 'Personal settings' }).waitFor();
    await screenshot(alice, 'settings');
    await alice.selectOption('#set-theme', 'dark');
    await alice.keyboard.press('Escape');
    await alice.getByRole('button', { name: 'Organization administration' }).click();
    await alice.locator('[role=dialog]', { hasText: 'Create a channel' }).waitFor();
    await screenshot(alice, 'admin-dark');
    await alice.keyboard.press('Escape');
    await screenshot(alice, 'topic-dark');
    await alice.setViewportSize({ width: 390, height: 800 });
    await screenshot(alice, 'phone');
    await alice.getByRole('button', { name: 'Open the channel list' }).click();
    await screenshot(alice, 'phone-sidebar');
    await alice.setViewportSize({ width: 1280, height: 800 });
  });

  await t.test('keyboard: / focuses search, Esc leaves it, c opens the composer', async () => {
    await bob.locator('.feed').click({ position: { x: 5, y: 5 } });
    await bob.keyboard.press('/');
    assert.equal(await bob.evaluate(() => document.activeElement?.id), 'search-input');
    await bob.keyboard.press('Escape');
    await bob.keyboard.press('k');
    await bob.locator('.msg.selected').waitFor();
    await bob.keyboard.press('c');
    // The composer opens on the next render: wait for the focus rather than read it at once.
    await bob.waitForFunction(() => document.activeElement?.id === 'compose-topic', null, { timeout: WAIT }).catch(() => {});
    assert.equal(await bob.evaluate(() => document.activeElement?.id), 'compose-topic');
  });

  await t.test('no serious accessibility violations (axe-core)', async () => {
    for (const page of [alice, bob]) {
      const violations = await axeViolations(page);
      assert.deepEqual(violations, []);
    }
    await alice.goto(`${live.url}/login`);
    assert.deepEqual(await axeViolations(alice), []);
  });
});
