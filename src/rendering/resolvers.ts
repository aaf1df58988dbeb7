// Every domain's part of a Markdown render context, in one list.
import type { ReferenceResolver } from './index.ts';
import { resolveUserMentions } from '../users/mentions.ts';
import { resolveGroupMentions } from '../user_groups/mentions.ts';
import { resolveLinkifiers } from '../linkifiers/rendering.ts';
import { resolveCustomEmoji } from '../custom_emoji/rendering.ts';
import { resolveChannelLinks } from '../channels/rendering.ts';
import { resolveUploadedImages } from '../uploads/rendering.ts';

export const RESOLVERS: readonly ReferenceResolver[] = [
  resolveUserMentions,
  resolveGroupMentions,
  resolveLinkifiers,
  resolveCustomEmoji,
  resolveChannelLinks,
  resolveUploadedImages,
];
