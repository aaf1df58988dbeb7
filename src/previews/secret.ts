// The image proxy's key (the reference's camo_key): CAMO_KEY when the operator
// sets one, else one generated on first start and kept in the database, so the
// proxied URLs in stored messages stay valid across restarts.

import { randomBytes } from 'node:crypto';
import type { Db } from '../db/schema.ts';

export async function loadImageProxyKey(db: Db, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await db
    .insertInto('server_secrets')
    .values({ name: 'camo_key', value: randomBytes(32).toString('hex') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', 'camo_key').executeTakeFirstOrThrow();
  return row.value;
}
