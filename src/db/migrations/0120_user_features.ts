// A user's status (text, emoji), the users they muted, and their alert words.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table user_statuses (
      user_id integer primary key,
      realm_id integer not null,
      status_text text not null default '',
      emoji_name text not null default '',
      emoji_code text not null default '',
      reaction_type text not null default 'unicode_emoji',
      client text not null default '',
      updated_at timestamptz not null default now(),
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create table muted_users (
      realm_id integer not null,
      user_id integer not null,
      muted_user_id integer not null,
      date_muted timestamptz not null,
      primary key (user_id, muted_user_id),
      foreign key (realm_id, user_id) references users (realm_id, id),
      foreign key (realm_id, muted_user_id) references users (realm_id, id)
    );
    create index muted_users_muted on muted_users (muted_user_id);
    create table alert_words (
      id serial primary key,
      realm_id integer not null,
      user_id integer not null,
      word text not null,
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create unique index alert_words_user_word on alert_words (user_id, lower(word));
    `,
  );
}
