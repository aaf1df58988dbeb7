// The operations commands of `npm run manage`: backup, restore (and, below,
// retention and export/import). manage.ts hands them over before it opens the
// database, since a backup or restore handles the database itself.

import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.ts';
import { BackupError, createBackup, restoreBackup } from '../backup/backup.ts';
import { terminalProgress } from '../backup/progress.ts';

export const OPS_USAGE = `  backup FILE     the whole server (database and uploads) into one archive
                  (PostgreSQL: online; embedded database: stop the server first)
  restore FILE    an archive from backup into an empty server (empty DATA_DIR / database)`;

type Out = (line: string) => void;

/** Runs an operations command; undefined when `command` is not one. */
export async function opsCommand(command: string, args: string[], out: Out, config: Config = loadConfig()): Promise<number | undefined> {
  const commands: Record<string, (positionals: string[]) => Promise<void>> = {
    async backup([file]) {
      const { files, bytes } = await createBackup(config, need(file, 'FILE'), terminalProgress());
      out(`backed up the ${config.databaseUrl ? 'PostgreSQL' : 'embedded'} database and ${files - 2} other files (${bytes} bytes) to ${file}`);
    },
    async restore([file]) {
      const manifest = await restoreBackup(config, need(file, 'FILE'), terminalProgress());
      out(`restored the backup of ${manifest.created_at} (Confab ${manifest.svc_version}); start the server`);
    },
  };
  const run = commands[command];
  if (!run) return undefined;
  try {
    const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
    await run(positionals);
    return 0;
  } catch (err) {
    if (err instanceof BackupError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      out(`error: ${(err as Error).message}`);
      return err instanceof BackupError ? 1 : 2;
    }
    throw err;
  }
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new BackupError(`missing ${name}`);
  return value;
}
