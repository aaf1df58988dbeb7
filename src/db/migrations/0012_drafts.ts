// Drafts: messages being written, synchronized between a user's clients.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table drafts (
      id serial primary key,
      realm_id integer not null,
      user_id integer not null,
      type text not null,
      recipients jsonb not null default '[]',
      topic text not null default '',
      content text not null,
      last_edit_time bigint not null,
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create index drafts_user_edit on drafts (user_id, last_edit_time desc, id desc);
    `,
  );
}
