// Custom profile fields (the organization's definitions) and each user's values.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table custom_profile_fields (
      id serial primary key,
      realm_id integer not null references realms (id),
      name text not null,
      hint text not null default '',
      field_type smallint not null,
      field_data text not null default '',
      "order" integer not null default 0,
      display_in_profile_summary boolean not null default false,
      required boolean not null default false,
      editable_by_user boolean not null default true,
      unique (realm_id, id),
      unique (realm_id, name)
    );

    create table custom_profile_field_values (
      realm_id integer not null,
      field_id integer not null,
      user_id integer not null,
      value text not null,
      rendered_value text,
      primary key (field_id, user_id),
      foreign key (realm_id, field_id) references custom_profile_fields (realm_id, id) on delete cascade,
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create index custom_profile_field_values_user on custom_profile_field_values (user_id);
  `,
  );
}
