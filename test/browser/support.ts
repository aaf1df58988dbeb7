// A real browser against a real, listening Confab server: Debian's Chromium
// driven by playwright-core, no outside network. Tests skip (saying why) only
// where Chromium is absent; `.ci/run` installs it.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { Config } from '../../src/config.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SKIP_REASON = existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM} (apt-get install chromium): browser tests skipped`;
const root = new URL('../..', import.meta.url).pathname;
export const SCREENSHOTS = join(root, 'test/browser/screenshots');
/** Generous: the CI machine is small and shared. */
export const WAIT = 60_000;

/** Builds web/dist if it is not there yet (npm install does it; a bare checkout may not have). */
export function ensureWebBuilt(): void {
  if (existsSync(join(root, 'web/dist/index.html'))) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build-web.ts'), '--if-missing'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('building the web client failed');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface LiveServer {
  server: TestServer;
  url: string;
  /** Stops the server (queues saved) and starts it again on the same port and data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A test server listening on a port of its own, its external URL that address. */
export async function startLiveServer(overrides: Partial<Config> = {}): Promise<LiveServer> {
  ensureWebBuilt();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // A data directory on disk, so that a restart keeps event queues (and PGlite's data).
  const dataDir = mkdtempSync(join(tmpdir(), 'confab-browser-'));
  const live: LiveServer = {
    server: await startTestServer({ externalUrl: url, dataDir, onboarding: true, ...overrides }),
    url,
    async restart() {
      live.server = await live.server.restart();
      await live.server.app.listen({ port, host: '127.0.0.1' });
    },
    async close() {
      await live.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await live.server.app.listen({ port, host: '127.0.0.1' });
  return live;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // playwright-core gives each launch a fresh, temporary user-data-dir.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** A page whose requests may only reach the test server. */
export async function openPage(browser: Browser, _live: LiveServer, viewport = { width: 1280, height: 800 }): Promise<Page> {
  // Reduced motion: no slide-in transitions, so screenshots show the settled screen.
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  await context.route(/^(?!http:\/\/127\.0\.0\.1:\d+\/)/, (route) => route.abort());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return page;
}

export async function signIn(page: Page, live: LiveServer, email: string, password: string): Promise<void> {
  await page.goto(`${live.url}/login`);
  await page.fill('#login-email', email);
  await page.fill('#login-password', password);
  await page.press('#login-password', 'Enter');
  await page.waitForSelector('.sidebar');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

const require = createRequire(import.meta.url);

/** Serious and critical accessibility violations on the page, by axe-core. */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')) }));
  });
}
