// Running the server as an operator does: `npm start` on a fresh machine, the
// first-start bootstrap, and the `npm run manage` command line.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as netServer } from 'node:net';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';

const root = new URL('../..', import.meta.url).pathname;
const node = process.execPath;
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Where this run keeps its data: a PGlite directory, or a fresh PostgreSQL database. */
async function storage(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'confab-ops-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  if (process.env.CONFAB_TEST_DB !== 'postgres') return { DATA_DIR: dir };
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `confab_ops_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { DATA_DIR: dir, DATABASE_URL: url.toString() };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const baseEnv = { PATH: process.env.PATH ?? '', ARGON2_MEMORY_KIB: '1024', ARGON2_TIME_COST: '1', LOG_LEVEL: 'warn' };

/** Starts `node src/main.ts` (what `npm start` runs) and waits until it listens. */
async function startMain(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(node, ['src/main.ts'], { cwd: root, env: { ...baseEnv, ...env, PORT: String(port) } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const base = `http://127.0.0.1:${port}/api/v1`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${base}/server_settings`);
      break;
    } catch {
      // Bounded, not tight: a first start renders Welcome Bot's messages (workers start), and CI is loaded.
      if (i > 1200 || child.exitCode !== null) throw new Error(`server did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async () => {
    if (child.exitCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    return new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  };
  cleanups.push(async () => void (await stop()));
  return { base, output: () => output, stop };
}

function manage(env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(node, ['src/cli/manage.ts', ...args], { cwd: root, env: { ...baseEnv, ...env }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** A request with a chosen Host header (fetch does not let one set it). */
function call(url: string, opts: { method?: string; host: string; headers?: Record<string, string>; form?: Record<string, string> }): Promise<any> {
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, host: opts.host, ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const form = (o: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(o).toString(),
});

test('npm start on an empty database: bootstrap owner with a printed password, login, /users/me, restart', async () => {
  const env: Record<string, string> = { ...(await storage()), BOOTSTRAP_EMAIL: 'founder@example.com', BOOTSTRAP_ORG_NAME: 'Founders' };
  const first = await startMain(env);
  const settings = await (await fetch(`${first.base}/server_settings`)).json();
  assert.equal(settings.result, 'success');
  assert.equal(settings.realm_name, 'Founders');
  const match = /Password \(shown only now\): (\S+)/.exec(first.output());
  assert.ok(match, `password printed:\n${first.output()}`);
  const login = await (await fetch(`${first.base}/fetch_api_key`, form({ username: 'founder@example.com', password: match[1] }))).json();
  assert.equal(login.result, 'success', JSON.stringify(login));
  const auth = { authorization: `Basic ${Buffer.from(`founder@example.com:${login.api_key}`).toString('base64')}` };
  const me = await (await fetch(`${first.base}/users/me`, { headers: auth })).json();
  assert.equal(me.email, 'founder@example.com');
  assert.equal(me.is_owner, true);
  assert.equal(await first.stop(), 0, 'a graceful stop exits 0');
  assert.equal(existsSync(join(env.DATA_DIR, 'confab.pid')), false, 'the data directory lock is released');

  // The second start finds the organization, creates nothing and prints no password.
  const second = await startMain(env);
  assert.doesNotMatch(second.output(), /shown only now/);
  const again = await (await fetch(`${second.base}/users/me`, { headers: auth })).json();
  assert.equal(again.user_id, me.user_id);
  await second.stop();
});

test('BOOTSTRAP_PASSWORD is used as given', async () => {
  const env: Record<string, string> = { ...(await storage()), BOOTSTRAP_EMAIL: 'chosen@example.com', BOOTSTRAP_PASSWORD: 'chosen-pass-1' };
  const server = await startMain(env);
  assert.doesNotMatch(server.output(), /shown only now/);
  const login = await (await fetch(`${server.base}/fetch_api_key`, form({ username: 'chosen@example.com', password: 'chosen-pass-1' }))).json();
  assert.equal(login.result, 'success');
  await server.stop();
});

test('npm run manage: organizations, users, roles and passwords', async () => {
  const env: Record<string, string> = { ...(await storage()), BOOTSTRAP_EMAIL: 'root@example.com', BOOTSTRAP_PASSWORD: 'root-pass-1' };
  // The server creates the root organization; the manage command works beside a stopped server.
  await (await startMain(env)).stop();

  const usage = manage(env);
  assert.equal(usage.code, 2);
  assert.match(usage.out, /Usage: npm run manage/);

  const org = manage(env, 'create-org', '--subdomain', 'acme', '--name', 'Acme', '--owner-email', 'boss@acme.example');
  assert.equal(org.code, 0, org.out);
  const ownerPassword = /owner password \(shown only now\): (\S+)/.exec(org.out)?.[1];
  assert.ok(ownerPassword);
  assert.match(manage(env, 'list-orgs').out, /'acme'\tAcme/);
  assert.equal(manage(env, 'create-org', '--subdomain', 'acme', '--name', 'Again', '--owner-email', 'x@acme.example').code, 1);

  const user = manage(env, 'create-user', '--org', 'acme', '--email', 'dev@acme.example', '--name', 'Dev One', '--password', 'dev-pass-1');
  assert.equal(user.code, 0, user.out);
  assert.equal(manage(env, 'change-role', '--org', 'acme', '--email', 'dev@acme.example', '--role', 'administrator').code, 0);
  assert.match(manage(env, 'list-users', '--org', 'acme').out, /dev@acme\.example\tDev One\trole 200/);
  const reset = manage(env, 'reset-password', '--org', 'acme', '--email', 'dev@acme.example');
  assert.equal(reset.code, 0);
  const newPassword = /new password \(shown only now\): (\S+)/.exec(reset.out)?.[1];
  assert.ok(newPassword);
  // The last owner keeps the role, as through the API.
  const demote = manage(env, 'change-role', '--org', 'acme', '--email', 'boss@acme.example', '--role', 'member');
  assert.equal(demote.code, 1);
  assert.match(demote.out, /only organization owner/);
  assert.equal(manage(env, 'create-user', '--org', 'nope', '--email', 'a@b.example', '--name', 'Aa Bb').code, 2);
  assert.equal(manage(env, 'change-role', '--org', 'acme', '--email', 'dev@acme.example', '--role', 'king').code, 2);

  // What the command did is what the server serves.
  const server = await startMain(env);
  const host = `acme.localhost:${new URL(server.base).port}`;
  const login = await call(`${server.base}/fetch_api_key`, {
    method: 'POST',
    host,
    form: { username: 'dev@acme.example', password: newPassword! },
  });
  assert.equal(login.result, 'success', JSON.stringify(login));
  const me = await call(`${server.base}/users/me`, {
    host,
    headers: { authorization: `Basic ${Buffer.from(`dev@acme.example:${login.api_key}`).toString('base64')}` },
  });
  assert.equal(me.role, 200);
  const rootLogin = await (await fetch(`${server.base}/fetch_api_key`, form({ username: 'dev@acme.example', password: newPassword! }))).json();
  assert.equal(rootLogin.code, 'AUTHENTICATION_FAILED', 'the account exists only in its own organization');
  // With the embedded database, the command refuses to open it under a running server.
  if (!env.DATABASE_URL) {
    const busy = manage(env, 'list-orgs');
    assert.notEqual(busy.code, 0);
    assert.match(busy.out, /stop it first/);
  }
  await server.stop();
});
