// `npm start`: a Confab server on HOST:PORT, data in DATA_DIR (or DATABASE_URL).
// With WORKERS=N > 1 this process becomes the primary and forks N servers.
import cluster from 'node:cluster';
import { loadConfig, type Config } from './config.ts';
import { createServer } from './server.ts';
import { prepareDatabase, runPrimary } from './cluster/primary.ts';
import type { BootstrapResult } from './realm/bootstrap.ts';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  console.error(`confab: ${(err as Error).message}`);
  process.exit(1);
}

function announce(b: BootstrapResult | undefined) {
  if (!b?.generatedPassword) return;
  // Printed once, on stdout, for the operator who just started the server.
  console.log(`\nOwner account: ${b.email}\nPassword (shown only now): ${b.generatedPassword}\n`);
}

if (config.workers > 1 && cluster.isPrimary) {
  announce(await prepareDatabase(config));
  runPrimary(config);
} else {
  const server = await createServer(config);
  const { log } = server.svc;
  if (server.bootstrap) log.info({ email: server.bootstrap.email }, 'created the first organization and its owner');
  announce(server.bootstrap);

  await server.listen();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
