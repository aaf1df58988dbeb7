import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { deleteAttachment, uploadFile } from './actions.ts';
import { formatAttachments, ownAttachments, uploadSpaceUsed } from './queries.ts';
import { removeAvatar, removeRealmImage, uploadAvatar, uploadRealmImage } from './profile-images.ts';
import { realmIconUrl } from '../realm/queries.ts';

export function uploadRoutes(r: Router): void {
  // Multipart: the file is the request's one file, whatever its field name.
  r.route('POST', '/user_uploads', {}, async (ctx) => {
    const { url, filename } = await uploadFile(ctx.svc, ctx.realm, ctx.user, ctx.request.files);
    return { uri: url, url, filename };
  });

  r.route('GET', '/attachments', {}, async (ctx) => ({
    attachments: await formatAttachments(ctx.svc.db, await ownAttachments(ctx.svc.db, ctx.realm.id, ctx.user.id)),
    upload_space_used: await uploadSpaceUsed(ctx.svc.db, ctx.realm.id),
  }));

  r.route('DELETE', '/attachments/{attachment_id}', {}, async (ctx, q) => {
    await deleteAttachment(ctx.svc, ctx.realm, ctx.user, q.attachment_id);
    return {};
  });

  r.route('POST', '/users/me/avatar', {}, async (ctx) => uploadAvatar(ctx.svc, ctx.realm, ctx.user, ctx.request.files));
  r.route('DELETE', '/users/me/avatar', {}, async (ctx) => removeAvatar(ctx.svc, ctx.realm, ctx.user));

  r.route('POST', '/realm/icon', {}, async (ctx) => ({
    icon_url: realmIconUrl(await uploadRealmImage(ctx.svc, ctx.realm, ctx.user, 'icon', ctx.request.files)),
  }));
  r.route('DELETE', '/realm/icon', {}, async (ctx) => ({ icon_url: realmIconUrl(await removeRealmImage(ctx.svc, ctx.realm, ctx.user, 'icon')) }));

  r.route('POST', '/realm/logo', { night: p.bool().default(false) }, async (ctx, q) => {
    await uploadRealmImage(ctx.svc, ctx.realm, ctx.user, q.night ? 'night_logo' : 'logo', ctx.request.files);
    return {};
  });
  r.route('DELETE', '/realm/logo', { night: p.bool().default(false) }, async (ctx, q) => {
    await removeRealmImage(ctx.svc, ctx.realm, ctx.user, q.night ? 'night_logo' : 'logo');
    return {};
  });
}
