// Scheduled messages and reminders: messages a user asked the server to send
// later, delivered by the scheduler (scheduled_messages/scheduler.ts).

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table scheduled_messages (
      id serial primary key,
      realm_id integer not null references realms (id),
      sender_id integer not null,
      -- 1: send later (POST /scheduled_messages), 2: a reminder (POST /reminders)
      delivery_type smallint not null,
      -- 'stream' or 'private'
      type text not null,
      channel_id integer,
      topic text not null default '',
      -- a direct message's recipients as the API names them: without the sender, unless alone
      dm_user_ids integer[],
      content text not null,
      rendered_content text not null,
      client text not null,
      -- null: the send path's default for the client
      read_by_sender boolean,
      scheduled_at timestamptz not null,
      delivered boolean not null default false,
      delivered_message_id integer,
      failed boolean not null default false,
      failure_message text,
      -- a plain id: a reminder outlives its message (it is sent with the content kept)
      reminder_target_message_id integer,
      reminder_note text,
      unique (realm_id, id),
      foreign key (realm_id, sender_id) references users (realm_id, id),
      foreign key (realm_id, channel_id) references channels (realm_id, id),
      foreign key (realm_id, delivered_message_id) references messages (realm_id, id) on delete set null (delivered_message_id)
    );
    -- What the scheduler looks for.
    create index scheduled_messages_due on scheduled_messages (scheduled_at, id) where not delivered and not failed;
    -- A user's list (GET /scheduled_messages, GET /reminders, register).
    create index scheduled_messages_by_sender on scheduled_messages (sender_id, delivery_type, scheduled_at) where not delivered;
    `,
  );
}
