// Where `manage import` finds its input and keeps its resumable state:
// `<DATA_DIR>/imports/<subdomain>/` holds the unpacked archive and state.json
// until the import is done.

import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { Progress } from '../backup/progress.ts';
import { ImportError, importRealm, readExportDir, unpackExport } from './import.ts';
import { isSlackExport, readSlackExport } from './slack.ts';

export async function importFrom(svc: Services, path: string, subdomain: string, progress: Progress): Promise<Realm> {
  if (!existsSync(path)) throw new ImportError(`no such file or directory: ${path}`);
  const base = svc.config.dataDir === ':memory:' ? mkdtempSync(join(tmpdir(), 'confab-import-')) : join(svc.config.dataDir, 'imports');
  const workDir = join(base, subdomain || 'root');
  mkdirSync(workDir, { recursive: true });
  const dir = statSync(path).isDirectory() ? path : await unpackExport(path, workDir);
  const data = isSlackExport(dir) ? readSlackExport(dir, subdomain || 'Imported from Slack') : readExportDir(dir);
  const realm = await importRealm(svc, data, subdomain, join(workDir, 'state.json'), progress);
  rmSync(workDir, { recursive: true, force: true });
  return realm;
}
