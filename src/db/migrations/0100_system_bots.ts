// System bots: accounts the server itself speaks through (Notification Bot).
// The reference keeps them in an internal organization; here every
// organization has its own (its rows keep their realm_id like any other), and
// they are shown as the reference shows them: in `cross_realm_bots`, not among
// the organization's users. Existing organizations get theirs here; new ones at
// creation (users/system-bots.ts).

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table users add column is_system_bot boolean not null default false;
    insert into users (realm_id, email, delivery_email, full_name, role, is_bot, bot_type, api_key, date_joined, settings, is_system_bot)
      select id, 'notification-bot@confab.internal', 'notification-bot@confab.internal', 'Notification Bot', 400, true, 1,
             md5(random()::text || clock_timestamp()::text || id::text), now(), '{"email_address_visibility": 1}', true
      from realms;
    `,
  );
}
