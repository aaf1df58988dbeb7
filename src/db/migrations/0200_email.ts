// Email (issue 17 point 4): email-change confirmations (only the hash of the
// emailed secret is stored, as for password resets) and the missed-message
// notifications waiting for their user's batch (email/missed-messages.ts).

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table email_change_requests (
      id serial primary key,
      -- sha-256 of the secret in the emailed link
      token_hash text not null unique,
      realm_id integer not null,
      user_id integer not null,
      old_email text not null,
      new_email text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
    );
    create index email_change_requests_user on email_change_requests (realm_id, user_id);

    create table missed_message_emails (
      id bigserial primary key,
      realm_id integer not null,
      user_id integer not null,
      message_id integer not null,
      -- why the user hears of it: direct_message, mention, group_mention, stream_wildcard,
      -- topic_wildcard, followed_topic, stream_email
      trigger text not null,
      -- every row of a user's batch has the time of its first row
      scheduled_at timestamptz not null,
      foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade,
      foreign key (realm_id, message_id) references messages (realm_id, id) on delete cascade
    );
    create index missed_message_emails_user on missed_message_emails (user_id, scheduled_at);
    create index missed_message_emails_message on missed_message_emails (message_id);
    `,
  );
}
