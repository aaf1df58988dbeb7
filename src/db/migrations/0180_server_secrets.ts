// Secrets of the installation that must outlive a restart (issue 18): the image
// proxy's HMAC key signs URLs stored in rendered messages. Not organization-owned.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table server_secrets (
      name text primary key,
      value text not null
    );
    `,
  );
}
