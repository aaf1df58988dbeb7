// Channels, subscriptions, default channels and channel folders.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table channel_folders (
      id serial primary key,
      realm_id integer not null references realms (id),
      name text not null,
      description text not null default '',
      rendered_description text not null default '',
      creator_id integer,
      date_created timestamptz not null default now(),
      is_archived boolean not null default false,
      "order" integer not null default 0,
      unique (realm_id, id),
      foreign key (realm_id, creator_id) references users (realm_id, id)
    );
    create unique index channel_folders_realm_name on channel_folders (realm_id, lower(name));

    create table channels (
      id serial primary key,
      realm_id integer not null references realms (id),
      name text not null,
      description text not null default '',
      rendered_description text not null default '',
      date_created timestamptz not null default now(),
      creator_id integer,
      invite_only boolean not null default false,
      is_web_public boolean not null default false,
      history_public_to_subscribers boolean not null default true,
      -- null: the organization's setting; -1: forever
      message_retention_days integer,
      topics_policy text not null default 'inherit',
      is_archived boolean not null default false,
      folder_id integer,
      can_add_subscribers_group_id integer not null,
      can_administer_channel_group_id integer not null,
      can_delete_any_message_group_id integer not null,
      can_delete_own_message_group_id integer not null,
      can_move_messages_out_of_channel_group_id integer not null,
      can_move_messages_within_channel_group_id integer not null,
      can_remove_subscribers_group_id integer not null,
      can_resolve_topics_group_id integer not null,
      can_send_message_group_id integer not null,
      can_subscribe_group_id integer not null,
      unique (realm_id, id),
      foreign key (realm_id, creator_id) references users (realm_id, id),
      foreign key (realm_id, folder_id) references channel_folders (realm_id, id),
      foreign key (realm_id, can_add_subscribers_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_administer_channel_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_delete_any_message_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_delete_own_message_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_move_messages_out_of_channel_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_move_messages_within_channel_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_remove_subscribers_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_resolve_topics_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_send_message_group_id) references user_groups (realm_id, id),
      foreign key (realm_id, can_subscribe_group_id) references user_groups (realm_id, id)
    );
    create unique index channels_realm_name on channels (realm_id, lower(name));

    -- A row per user and channel ever subscribed; active = false once unsubscribed.
    create table subscriptions (
      realm_id integer not null,
      user_id integer not null,
      channel_id integer not null,
      active boolean not null default true,
      color text not null,
      is_muted boolean not null default false,
      pin_to_top boolean not null default false,
      desktop_notifications boolean,
      audible_notifications boolean,
      push_notifications boolean,
      email_notifications boolean,
      wildcard_mentions_notify boolean,
      primary key (user_id, channel_id),
      foreign key (realm_id, user_id) references users (realm_id, id),
      foreign key (realm_id, channel_id) references channels (realm_id, id)
    );
    create index subscriptions_channel on subscriptions (channel_id) where active;

    create table default_channels (
      realm_id integer not null,
      channel_id integer not null primary key,
      foreign key (realm_id, channel_id) references channels (realm_id, id)
    );
    create index default_channels_realm on default_channels (realm_id);
  `,
  );
}
