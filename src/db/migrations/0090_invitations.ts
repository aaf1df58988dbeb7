// Invitations: email invitations and reusable (multi-use) links in one table,
// the channels and groups a new account joins, each send for the daily limit,
// and an organization's own daily limit where the operator set one.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table invitations (
      id serial primary key,
      realm_id integer not null references realms (id),
      is_multiuse boolean not null,
      -- null for multi-use links, which take the address at acceptance
      email text,
      referred_by_id integer not null,
      invited_as smallint not null,
      token text not null unique,
      invited_at timestamptz not null,
      -- null: never expires
      expires_at timestamptz,
      -- pending, used (email invitations only) or revoked
      status text not null default 'pending',
      include_realm_default_subscriptions boolean not null,
      notify_referrer_on_join boolean not null,
      welcome_message_custom_text text,
      created_user_id integer,
      unique (realm_id, id),
      check ((email is null) = is_multiuse),
      check (status in ('pending', 'used', 'revoked')),
      foreign key (realm_id, referred_by_id) references users (realm_id, id),
      foreign key (realm_id, created_user_id) references users (realm_id, id)
    );
    create index invitations_realm_status on invitations (realm_id, status);

    create table invitation_channels (
      realm_id integer not null,
      invitation_id integer not null,
      channel_id integer not null,
      primary key (invitation_id, channel_id),
      foreign key (realm_id, invitation_id) references invitations (realm_id, id) on delete cascade,
      foreign key (realm_id, channel_id) references channels (realm_id, id)
    );

    create table invitation_groups (
      realm_id integer not null,
      invitation_id integer not null,
      group_id integer not null,
      primary key (invitation_id, group_id),
      foreign key (realm_id, invitation_id) references invitations (realm_id, id) on delete cascade,
      foreign key (realm_id, group_id) references user_groups (realm_id, id)
    );

    create table invitation_sends (
      id serial primary key,
      realm_id integer not null references realms (id),
      sent_at timestamptz not null
    );
    create index invitation_sends_realm_time on invitation_sends (realm_id, sent_at);

    create table realm_invite_limits (
      realm_id integer primary key references realms (id),
      daily_max integer not null check (daily_max >= 0)
    );
  `,
  );
}
