// The web client (the top-level web/ folder, built by Vite into web/dist) is
// served by Confab itself at `/`: its files with their content types, hashed
// assets cached for a year, and index.html for every page of the app (any GET
// that is no file and not under a prefix the server keeps for itself).

import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';

const gzipAsync = promisify(gzip);

/** The server's own paths: the web client answers nothing there. */
export const SERVER_PREFIXES = ['/api', '/json', '/user_uploads', '/user_avatars', '/avatar'];
/** The client's folders of files: a missing file there is a 404, not the app's page. */
const FILE_PREFIXES = ['/assets', '/static'];

const under = (path: string, prefixes: string[]): boolean => prefixes.some((p) => path === p || path.startsWith(`${p}/`));

/** Vite puts content-hashed files here: a name is never reused for other bytes. */
const HASHED_PREFIX = '/assets/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

const COMPRESSIBLE = /^(text\/|application\/(json|manifest\+json|wasm)|image\/svg)/;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Confab</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>Confab is running, but its web client is not built</h1>
<p>The API answers at <code>/api/v1</code>. To build the web client, run <code>npm install</code>
(it builds <code>web/</code>), or <code>npm --prefix web ci &amp;&amp; npm --prefix web run build</code>, then reload.</p>
</body></html>
`;

interface Cached {
  mtimeMs: number;
  data: Buffer;
  gzipped?: Buffer;
}

/** Serves the built client from `config.webClientDir`; files are read once and kept (gzipped too). */
export class WebClient {
  readonly #root: string;
  readonly #cache = new Map<string, Cached>();

  constructor(config: Pick<Config, 'webClientDir'>) {
    this.#root = normalize(config.webClientDir);
  }

  /** Whether this GET is the web client's to answer (a file or a page of the app). */
  static claims(req: FastifyRequest): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    return !under(req.url.split('?', 1)[0], SERVER_PREFIXES);
  }

  async serve(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const path = safePath(req.url.split('?', 1)[0]);
    const file = path === null || path === '/' ? undefined : await this.#read(path);
    if (file) return this.#send(req, reply, path!, file, path!.startsWith(HASHED_PREFIX) ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (path === null || under(path, FILE_PREFIXES)) {
      return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    }
    const index = await this.#read('/index.html');
    if (!index) return reply.code(503).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(NOT_BUILT);
    // The page names the assets of this build: always asked again, never stale after an upgrade.
    return this.#send(req, reply, '/index.html', index, 'no-cache');
  }

  async #read(path: string): Promise<Cached | undefined> {
    const full = join(this.#root, path);
    if (!full.startsWith(this.#root + sep)) return undefined;
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(full);
    } catch {
      return undefined;
    }
    if (!info.isFile()) return undefined;
    const cached = this.#cache.get(full);
    if (cached && cached.mtimeMs === info.mtimeMs) return cached;
    const fresh: Cached = { mtimeMs: info.mtimeMs, data: await readFile(full) };
    this.#cache.set(full, fresh);
    return fresh;
  }

  async #send(req: FastifyRequest, reply: FastifyReply, path: string, file: Cached, cacheControl: string): Promise<FastifyReply> {
    const type = TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
    reply.code(200).type(type).header('Cache-Control', cacheControl).header('X-Content-Type-Options', 'nosniff');
    return sendCompressible(req, reply, file, type);
  }
}

/** Sends a kept body, gzipped (once, then kept too) where that is worth it and the client takes gzip. */
export async function sendCompressible(
  req: FastifyRequest,
  reply: FastifyReply,
  file: { data: Buffer; gzipped?: Buffer },
  type: string,
): Promise<FastifyReply> {
  if (COMPRESSIBLE.test(type) && file.data.length > 1024) {
    reply.header('Vary', 'Accept-Encoding');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      file.gzipped ??= await gzipAsync(file.data, { level: 9 });
      return reply.header('Content-Encoding', 'gzip').send(file.gzipped);
    }
  }
  return reply.send(file.data);
}

/** The URL path as a file path, or null when it tries to leave the folder or cannot be decoded. */
function safePath(urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.split('/').includes('..')) return null;
  return normalize(decoded).split(sep).join('/');
}
