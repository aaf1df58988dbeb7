import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { createFolder, reorderFolders, updateFolder } from './actions.ts';
import { listFolders } from './queries.ts';
import { formatFolder } from './format.ts';

export function channelFolderRoutes(r: Router): void {
  r.route('POST', '/channel_folders/create', { name: p.str(), description: p.str() }, async (ctx, q) => {
    const folder = await createFolder(ctx.svc, ctx.realm, ctx.user, q);
    return { channel_folder_id: folder.id };
  });

  r.route('GET', '/channel_folders', { include_archived: p.bool().default(false) }, async (ctx, q) => ({
    channel_folders: (await listFolders(ctx.svc.db, ctx.realm.id, q.include_archived)).map(formatFolder),
  }));

  r.route('PATCH', '/channel_folders', { order: p.json(z.array(z.int())) }, async (ctx, q) => {
    await reorderFolders(ctx.svc, ctx.realm, ctx.user, q.order);
    return {};
  });

  r.route(
    'PATCH',
    '/channel_folders/{channel_folder_id}',
    { name: p.str().optional(), description: p.str().optional(), is_archived: p.bool().optional() },
    async (ctx, q) => {
      await updateFolder(ctx.svc, ctx.realm, ctx.user, q.channel_folder_id, q);
      return {};
    },
  );
}
