// Welcome Bot's first messages in a new organization (onboarding/): each new
// member gets them unread, the first of each topic starred (the reference's
// OnboardingUserMessage).

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table onboarding_messages (
      realm_id integer not null,
      message_id integer not null primary key,
      starred boolean not null,
      foreign key (realm_id, message_id) references messages (realm_id, id) on delete cascade
    );
    create index onboarding_messages_realm on onboarding_messages (realm_id);
    `,
  );
}
