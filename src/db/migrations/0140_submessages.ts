// Submessages: the data widgets (polls, to-do lists) attach to a message.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table submessages (
      id serial primary key,
      realm_id integer not null,
      message_id integer not null,
      sender_id integer not null,
      msg_type text not null,
      content text not null,
      foreign key (realm_id, message_id) references messages (realm_id, id) on delete cascade,
      foreign key (realm_id, sender_id) references users (realm_id, id)
    );
    create index submessages_message on submessages (message_id, id);
    `,
  );
}
