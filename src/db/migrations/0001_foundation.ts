// Organizations, users, and the user groups that roles and permissions are made of.
// Every organization-owned row carries realm_id, and references between such rows
// include it, so a row can never point into another organization.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table realms (
      id serial primary key,
      string_id text not null unique,
      name text not null,
      description text not null default '',
      deactivated boolean not null default false,
      date_created timestamptz not null default now(),
      settings jsonb not null default '{}',
      group_settings jsonb not null default '{}'
    );

    create table users (
      id serial primary key,
      realm_id integer not null references realms (id),
      email text not null,
      delivery_email text not null,
      full_name text not null,
      role smallint not null,
      is_active boolean not null default true,
      is_bot boolean not null default false,
      bot_type smallint,
      bot_owner_id integer,
      is_mirror_dummy boolean not null default false,
      api_key text not null unique,
      password_hash text,
      date_joined timestamptz not null default now(),
      timezone text not null default '',
      avatar_source text not null default 'G',
      avatar_version integer not null default 1,
      can_create_users boolean not null default false,
      can_change_user_emails boolean not null default false,
      settings jsonb not null default '{}',
      last_active_at timestamptz,
      unique (realm_id, id),
      foreign key (realm_id, bot_owner_id) references users (realm_id, id)
    );
    create unique index users_realm_delivery_email on users (realm_id, lower(delivery_email));
    create unique index users_realm_email on users (realm_id, lower(email));

    create table user_groups (
      id serial primary key,
      realm_id integer not null references realms (id),
      -- null for the anonymous groups that hold a {direct_members, direct_subgroups} setting value
      name text,
      description text not null default '',
      is_system_group boolean not null default false,
      creator_id integer,
      date_created timestamptz,
      deactivated boolean not null default false,
      can_add_members_group_id integer,
      can_join_group_id integer,
      can_leave_group_id integer,
      can_manage_group_id integer,
      can_mention_group_id integer,
      can_remove_members_group_id integer,
      unique (realm_id, id),
      foreign key (realm_id, creator_id) references users (realm_id, id),
      foreign key (realm_id, can_add_members_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_join_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_leave_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_manage_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_mention_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_remove_members_group_id) references user_groups (realm_id, id)
    );
    create unique index user_groups_realm_name on user_groups (realm_id, lower(name)) where name is not null;

    create table user_group_members (
      realm_id integer not null,
      group_id integer not null,
      user_id integer not null,
      primary key (group_id, user_id),
      foreign key (realm_id, group_id) references user_groups (realm_id, id) on delete cascade,
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create index user_group_members_user on user_group_members (user_id);

    create table user_group_subgroups (
      realm_id integer not null,
      supergroup_id integer not null,
      subgroup_id integer not null,
      primary key (supergroup_id, subgroup_id),
      foreign key (realm_id, supergroup_id) references user_groups (realm_id, id) on delete cascade,
      foreign key (realm_id, subgroup_id) references user_groups (realm_id, id) on delete cascade
    );
    create index user_group_subgroups_subgroup on user_group_subgroups (subgroup_id);
  `,
  );
}
