// Read state: finding a user's direct message conversations (register's
// recent_private_conversations) without scanning every conversation.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create index recipients_dm_users on recipients using gin (dm_user_ids) where channel_id is null;
  `,
  );
}
