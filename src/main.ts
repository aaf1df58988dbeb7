// `npm start`: a Confab server on HOST:PORT, data in DATA_DIR (or DATABASE_URL).
import { loadConfig } from './config.ts';
import { createServer } from './server.ts';

const config = loadConfig();
const server = await createServer(config);
const { log } = server.svc;

if (server.bootstrap) {
  const b = server.bootstrap;
  log.info({ email: b.email }, 'created the first organization and its owner');
  if (b.generatedPassword) {
    // Printed once, on stdout, for the operator who just started the server.
    console.log(`\nOwner account: ${b.email}\nPassword (shown only now): ${b.generatedPassword}\n`);
  }
}

await server.listen();

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  await server.close();
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
