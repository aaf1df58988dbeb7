// The operations commands of `npm run manage`: backup, restore (and, below,
// retention and export/import). manage.ts hands them over before it opens the
// database, since a backup or restore handles the database itself.

import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig, type Config } from '../config.ts';
import type { Services } from '../services.ts';
import { openDatabase, migrateToLatest } from '../db/index.ts';
import { assertDataDirFree } from '../db/lock.ts';
import { buildServices } from '../server.ts';
import { getRealmBySubdomain } from '../realm/queries.ts';
import { BackupError, createBackup, restoreBackup } from '../backup/backup.ts';
import { terminalProgress } from '../backup/progress.ts';
import { restoreArchived, runRetentionPass } from '../retention/retention.ts';
import { exportRealm } from '../export/export.ts';
import { ImportError } from '../export/import.ts';
import { ApiError } from '../http/errors.ts';
import { importFrom } from '../export/command.ts';

export const OPS_USAGE = `  backup FILE     the whole server (database and uploads) into one archive
                  (PostgreSQL: online; embedded database: stop the server first)
  restore FILE    an archive from backup into an empty server (empty DATA_DIR / database)
  retention-pass  apply the message retention policies now (the server does it daily)
  restore-retention --org S [--channel NAME]   put back what the retention policy deleted
                  (within ARCHIVED_DATA_VACUUMING_DELAY_DAYS)
  export --org S FILE   one organization in the reference's export format (tar.gz)
  import --subdomain S PATH   a new organization from an export (reference format, or a Slack
                  export; a directory or .tar.gz); run it again to resume an interrupted import`;

type Out = (line: string) => void;

/** Runs an operations command; undefined when `command` is not one. */
export async function opsCommand(command: string, args: string[], out: Out, config: Config = loadConfig()): Promise<number | undefined> {
  const commands: Record<string, (positionals: string[], values: Record<string, string | undefined>) => Promise<void>> = {
    async backup([file]) {
      const { files, bytes } = await createBackup(config, need(file, 'FILE'), terminalProgress());
      out(`backed up the ${config.databaseUrl ? 'PostgreSQL' : 'embedded'} database and ${files - 2} other files (${bytes} bytes) to ${file}`);
    },
    async restore([file]) {
      const manifest = await restoreBackup(config, need(file, 'FILE'), terminalProgress());
      out(`restored the backup of ${manifest.created_at} (Confab ${manifest.svc_version}); start the server`);
    },
    'retention-pass': () =>
      withServices(config, async (svc) => {
        const result = await runRetentionPass(svc);
        out(
          result
            ? `archived ${result.archived} expired messages; forgot ${result.vacuumed} old archives; deleted ${result.unclaimed} unclaimed uploads`
            : 'another retention pass is running',
        );
      }),
    export: ([file], values) =>
      withServices(config, async (svc) => {
        const realm = await realmNamed(svc, values.org);
        const { messages } = await exportRealm(svc, realm, need(file, 'FILE'), terminalProgress());
        out(`exported '${realm.string_id}' (${messages} messages) to ${file}`);
      }),
    import: ([path], values) =>
      withServices(config, async (svc) => {
        const realm = await importFrom(svc, need(path, 'PATH'), need(values.subdomain, '--subdomain'), terminalProgress());
        out(`imported organization ${realm.id} at subdomain '${realm.string_id}'`);
      }),
    'restore-retention': (_, values) =>
      withServices(config, async (svc) => {
        const realm = await realmNamed(svc, values.org);
        let channelId: number | undefined;
        if (values.channel !== undefined) {
          const channel = await svc.db
            .selectFrom('channels')
            .select('id')
            .where('realm_id', '=', realm.id)
            .where('name', '=', values.channel)
            .executeTakeFirst();
          if (!channel) throw new BackupError(`no channel '${values.channel}' in that organization`);
          channelId = channel.id;
        }
        out(`restored ${await restoreArchived(svc, realm, channelId)} messages`);
      }),
  };
  const run = commands[command];
  if (!run) return undefined;
  try {
    const options = { org: { type: 'string' }, channel: { type: 'string' }, subdomain: { type: 'string' } } as const;
    const { positionals, values } = parseArgs({ args, options, allowPositionals: true, strict: true });
    await run(positionals, values);
    return 0;
  } catch (err) {
    if (err instanceof BackupError || err instanceof ImportError || err instanceof ApiError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      out(`error: ${(err as Error).message}`);
      return (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
    }
    throw err;
  }
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new BackupError(`missing ${name}`);
  return value;
}

/** Services on the configured database, for commands that go through actions. */
async function withServices(config: Config, work: (svc: Services) => Promise<void>): Promise<void> {
  if (!config.databaseUrl) assertDataDirFree(config.dataDir);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
    preparedStatements: config.databasePreparedStatements,
  });
  try {
    await migrateToLatest(database.db);
    await work(await buildServices(config, database, pino({ level: 'warn' })));
  } finally {
    await database.close();
  }
}

async function realmNamed(svc: Services, subdomain: string | undefined) {
  const realm = await getRealmBySubdomain(svc.db, need(subdomain, '--org'));
  if (!realm) throw new BackupError(`no organization with subdomain '${subdomain}'`);
  return realm;
}
