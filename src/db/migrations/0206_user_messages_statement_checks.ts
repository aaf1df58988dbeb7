// user_messages' two foreign keys, checked once per statement instead of once per row
// (docs/DECISIONS.md, "user_messages without row-level foreign keys"). A channel send
// writes a row per recipient: each row's two referential checks (a lookup and a
// FOR KEY SHARE lock each) were most of the cost of its insert. The same checks,
// set-based, on all of a statement's rows (its transition table), and the cascade from
// messages as one delete per statement.

import { sql, type Kysely } from 'kysely';
import { runScript } from '../script.ts';

// plpgsql bodies hold `;` at line ends, which runScript would split on: run whole.
const FUNCTIONS = [
  `create function user_messages_check_references() returns trigger language plpgsql as $$
  begin
    -- The messages locked for key share until commit, as the foreign key's check locked
    -- each: a concurrent delete of one waits for this transaction, or was seen to be done.
    if (select count(*) from (select 1 from messages m where (m.realm_id, m.id) in (select realm_id, message_id from new_rows) for key share of m) l)
       <> (select count(*) from (select distinct realm_id, message_id from new_rows) d) then
      raise foreign_key_violation using message = 'insert into user_messages: no such message in the organization';
    end if;
    -- Users are never deleted and keep their ids: no lock (the foreign key's made concurrent
    -- sends to a channel key-share-lock the same users rows).
    if exists (select 1 from new_rows n where not exists (select 1 from users u where u.realm_id = n.realm_id and u.id = n.user_id)) then
      raise foreign_key_violation using message = 'insert into user_messages: no such user in the organization';
    end if;
    return null;
  end
  $$`,
  `create function messages_delete_user_messages() returns trigger language plpgsql as $$
  begin
    delete from user_messages where message_id in (select id from old_rows);
    return null;
  end
  $$`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const f of FUNCTIONS) await sql.raw(f).execute(db);
  await runScript(
    db,
    `
    alter table user_messages drop constraint user_messages_realm_id_user_id_fkey;
    alter table user_messages drop constraint user_messages_realm_id_message_id_fkey;
    -- Rows keep their keys (only flags are ever updated): inserts alone are checked.
    create trigger user_messages_check_references after insert on user_messages
      referencing new table as new_rows for each statement execute function user_messages_check_references();
    -- What "on delete cascade" did.
    create trigger messages_delete_user_messages after delete on messages
      referencing old table as old_rows for each statement execute function messages_delete_user_messages();
    `,
  );
}
