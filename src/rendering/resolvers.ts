// Every domain's part of a Markdown render context, in one list.
import type { ReferenceResolver } from './index.ts';
import { resolveUserMentions } from '../users/mentions.ts';

export const RESOLVERS: readonly ReferenceResolver[] = [resolveUserMentions];
