// Uploaded files and the messages that link them; the organization's icon and
// logos (uploaded or default, and a version for caches).

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table attachments (
      id serial primary key,
      realm_id integer not null references realms (id),
      owner_id integer not null,
      path_id text not null unique,
      file_name text not null,
      size bigint not null,
      content_type text not null,
      create_time timestamptz not null default now(),
      original_width_px integer,
      original_height_px integer,
      frames integer,
      thumbnailed boolean not null default false,
      unique (realm_id, id),
      foreign key (realm_id, owner_id) references users (realm_id, id)
    );
    create index attachments_owner on attachments (owner_id, id);
    create index attachments_realm on attachments (realm_id);

    create table attachment_messages (
      realm_id integer not null,
      attachment_id integer not null,
      message_id integer not null,
      primary key (attachment_id, message_id),
      foreign key (realm_id, attachment_id) references attachments (realm_id, id) on delete cascade,
      foreign key (realm_id, message_id) references messages (realm_id, id) on delete cascade
    );
    create index attachment_messages_message on attachment_messages (message_id);

    alter table realms add column icon_source text not null default 'G';
    alter table realms add column icon_version integer not null default 1;
    alter table realms add column logo_source text not null default 'D';
    alter table realms add column logo_version integer not null default 1;
    alter table realms add column night_logo_source text not null default 'D';
    alter table realms add column night_logo_version integer not null default 1;
  `,
  );
}
