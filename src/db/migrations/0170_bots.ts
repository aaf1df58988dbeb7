// Bots (issue 17): a bot's default channels, its outgoing-webhook service, the
// settings of its incoming-webhook integration, and the generic job table that
// outgoing-webhook deliveries (and later email) go through.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table users add column default_sending_stream_id integer;
    alter table users add column default_events_register_stream_id integer;
    alter table users add column default_all_public_streams boolean not null default false;
    alter table users add foreign key (realm_id, default_sending_stream_id) references channels (realm_id, id) on delete set null (default_sending_stream_id);
    alter table users add foreign key (realm_id, default_events_register_stream_id) references channels (realm_id, id) on delete set null (default_events_register_stream_id);

    -- An outgoing-webhook bot's endpoint (the reference's Service): one per bot.
    create table bot_services (
      id serial primary key,
      realm_id integer not null references realms (id),
      bot_id integer not null,
      name text not null,
      base_url text not null,
      -- 1: the reference's generic format, 2: Slack-compatible
      interface smallint not null,
      token text not null,
      unique (realm_id, id),
      unique (bot_id),
      foreign key (realm_id, bot_id) references users (realm_id, id)
    );

    -- An incoming-webhook bot's configuration (integration_id and the integration's options).
    create table bot_config (
      realm_id integer not null references realms (id),
      bot_id integer not null,
      key text not null,
      value text not null,
      primary key (bot_id, key),
      foreign key (realm_id, bot_id) references users (realm_id, id)
    );

    -- Work done outside requests, at least once: a worker claims a due row (SKIP LOCKED),
    -- holds it for a lease, runs it outside any transaction, then deletes or reschedules it.
    create table jobs (
      id bigserial primary key,
      realm_id integer references realms (id),
      kind text not null,
      payload jsonb not null,
      attempts integer not null default 0,
      run_after timestamptz not null default now(),
      -- a claimed job; a worker that died leaves it to be claimed again after this
      locked_until timestamptz,
      last_error text,
      -- set when the last attempt failed: kept for the operator, never run again
      failed_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index jobs_due on jobs (run_after, id) where failed_at is null;
    `,
  );
}
