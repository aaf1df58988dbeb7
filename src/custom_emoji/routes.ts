import type { Router } from '../http/router.ts';
import { listCustomEmoji } from './queries.ts';
import { emojiDict } from './format.ts';
import { deactivateCustomEmoji, uploadCustomEmoji } from './actions.ts';

export function customEmojiRoutes(r: Router): void {
  r.route('GET', '/realm/emoji', {}, async (ctx) => ({ emoji: emojiDict(await listCustomEmoji(ctx.svc.db, ctx.realm.id)) }));

  // Multipart: the image is the request's one file, whatever its field name.
  r.route('POST', '/realm/emoji/{emoji_name:str}', {}, async (ctx, q) => {
    await uploadCustomEmoji(ctx.svc, ctx.realm, ctx.user, q.emoji_name, ctx.request.files);
    return {};
  });

  r.route('DELETE', '/realm/emoji/{emoji_name:str}', {}, async (ctx, q) => {
    await deactivateCustomEmoji(ctx.svc, ctx.realm, ctx.user, q.emoji_name);
    return {};
  });
}
