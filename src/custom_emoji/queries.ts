import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { RealmEmojiRow } from './tables.ts';

/** Every custom emoji of the organization, deactivated ones included, by id. */
export async function listCustomEmoji(db: Executor, realmId: number): Promise<RealmEmojiRow[]> {
  return db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
}

/** The active custom emoji of that name (reactions, `:name:` in Markdown). */
export async function customEmojiByName(db: Executor, realmId: number, name: string): Promise<RealmEmojiRow | undefined> {
  return db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).where('name', '=', name).where('deactivated', '=', false).executeTakeFirst();
}

/**
 * The custom emoji with that id (a reaction's `emoji_code`): active only, unless
 * `includeDeactivated` (to tell "This custom emoji has been deactivated." apart).
 */
export async function customEmojiById(
  db: Executor,
  realmId: number,
  id: number,
  opts: { includeDeactivated?: boolean } = {},
): Promise<RealmEmojiRow | undefined> {
  let q = db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).where('id', '=', id);
  if (!opts.includeDeactivated) q = q.where('deactivated', '=', false);
  return q.executeTakeFirst();
}

/** The active custom emoji of these names, for rendering (one array parameter: the statement's text does not change with their number). */
export async function activeCustomEmoji(db: Executor, realmId: number, names: readonly string[]): Promise<RealmEmojiRow[]> {
  return db
    .selectFrom('realm_emoji')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('deactivated', '=', false)
    .where('name', '=', sql<string>`any(${names}::text[])`)
    .orderBy('id')
    .execute();
}
