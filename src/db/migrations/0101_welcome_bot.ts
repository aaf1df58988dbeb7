// Welcome Bot, the second system bot (users/system-bots.ts): it speaks to new
// users. Existing organizations get theirs here; new ones at creation.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    insert into users (realm_id, email, delivery_email, full_name, role, is_bot, bot_type, api_key, date_joined, settings, is_system_bot)
      select r.id, 'welcome-bot@confab.internal', 'welcome-bot@confab.internal', 'Welcome Bot', 400, true, 1,
             md5(random()::text || clock_timestamp()::text || r.id::text), now(), '{"email_address_visibility": 1}', true
      from realms r
      where not exists (select 1 from users u where u.realm_id = r.id and u.email = 'welcome-bot@confab.internal');
    `,
  );
}
