// GET/POST /export/realm, DELETE /export/realm/{export_id}, and the export
// files at their secret URLs (outside /api/v1, as the reference serves them).

import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { uploadsRoot } from '../uploads/storage.ts';
import { deleteExport, exportConsents, listExports, requestExport } from './actions.ts';
import { EXPORT_TYPE } from './tables.ts';
import { requireAdmin } from '../users/access.ts';

export function realmExportRoutes(r: Router): void {
  r.route('GET', '/export/realm', {}, async (ctx) => {
    requireAdmin(ctx.user);
    return { exports: await listExports(ctx.svc, ctx.svc.db, ctx.realm) };
  });
  r.route('POST', '/export/realm', { export_type: p.int().default(EXPORT_TYPE.PUBLIC) }, async (ctx, q) => ({
    id: await requestExport(ctx.svc, ctx.realm, ctx.user, q.export_type),
  }));
  r.route('GET', '/export/realm/consents', {}, async (ctx) => ({ export_consents: await exportConsents(ctx.svc, ctx.realm, ctx.user) }));
  r.route('DELETE', '/export/realm/{export_id}', {}, async (ctx, q) => {
    await deleteExport(ctx.svc, ctx.realm, ctx.user, q.export_id);
    return {};
  });
}

const SECRET = /^[0-9a-f]{32}$/;
const FILE = /^confab-export-[a-z0-9-]+-\d+\.tar\.gz$/;

/** The file of a finished export: whoever holds its URL (a 128-bit secret) may download it. */
export function registerExportFileRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/user_avatars/exports/:realm/:secret/:file', async (req, reply) => {
    const { realm, secret, file } = req.params as Record<string, string>;
    if (!/^\d{1,15}$/.test(realm) || !SECRET.test(secret) || !FILE.test(file)) return reply.callNotFound();
    const path = join(uploadsRoot(svc.config), 'exports', realm, secret, file);
    if (!existsSync(path)) return reply.callNotFound();
    return reply.header('Content-Type', 'application/gzip').header('Cache-Control', 'private, no-store').send(createReadStream(path));
  });
}
