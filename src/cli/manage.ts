// `npm run manage -- <command> [options]`: administration for operators who
// have no client. It works on the same database the server uses (DATABASE_URL or
// DATA_DIR) and goes through the same actions, so the same rules hold.

import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { openDatabase, migrateToLatest } from '../db/index.ts';
import { generatePassword } from '../auth/passwords.ts';
import { buildCommandServices } from '../server.ts';
import { createRealm, setRealmDeactivated } from '../realm/actions.ts';
import { getRealmBySubdomain } from '../realm/queries.ts';
import { changeRoleAsOperator, createUserAsOperator, setPasswordAsOperator } from '../users/actions.ts';
import { getUserByEmail, listUsers } from '../users/queries.ts';
import { ROLE, type Role } from '../users/roles.ts';
import { ApiError } from '../http/errors.ts';
import { assertDataDirFree } from '../db/lock.ts';
import { setDailyInvitationLimit } from '../invitations/actions.ts';
import { OPS_USAGE, opsCommand } from '../ops/cli.ts';

const USAGE = `Usage: npm run manage -- <command> [options]

Commands:
  create-org      --subdomain S --name NAME --owner-email E [--owner-name N] [--owner-password P]
  list-orgs
  deactivate-org  --org S          reactivate-org --org S
  create-user     --org S --email E --name N [--role R] [--password P]
  list-users      --org S
  change-role     --org S --email E --role R
  reset-password  --org S --email E [--password P]
  set-invite-limit --org S --limit N|default   invitations the organization may send a day
${OPS_USAGE}

--org is an organization's subdomain ('' for the root organization).
Roles: owner, administrator, moderator, member, guest.
A password left out is generated and printed once.`;

const ROLE_NAMES: Record<string, Role> = {
  owner: ROLE.OWNER,
  administrator: ROLE.ADMINISTRATOR,
  admin: ROLE.ADMINISTRATOR,
  moderator: ROLE.MODERATOR,
  member: ROLE.MEMBER,
  guest: ROLE.GUEST,
};

class UsageError extends Error {}

function need(values: Record<string, string | undefined>, name: string): string {
  const v = values[name];
  if (v === undefined) throw new UsageError(`missing --${name}`);
  return v;
}

function roleFrom(name: string): Role {
  const role = ROLE_NAMES[name.toLowerCase()];
  if (role === undefined) throw new UsageError(`unknown role '${name}'`);
  return role;
}

export async function manage(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    out(USAGE);
    return command ? 0 : 2;
  }
  const ops = await opsCommand(command, rest, out);
  if (ops !== undefined) return ops;
  const { values } = parseArgs({
    args: rest,
    options: Object.fromEntries(
      ['subdomain', 'name', 'owner-email', 'owner-name', 'owner-password', 'org', 'email', 'role', 'password', 'limit'].map((o) => [o, { type: 'string' }]),
    ),
    strict: true,
  }) as { values: Record<string, string | undefined> };

  const config = loadConfig();
  if (!config.databaseUrl) assertDataDirFree(config.dataDir);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
    preparedStatements: config.databasePreparedStatements,
  });
  await migrateToLatest(database.db);
  // This process has no queues: with BROKER_URL its events reach the servers' clients through the
  // broker; without one, no client hears of them and other processes' caches expire in seconds.
  const { svc, close } = await buildCommandServices(config, database, pino({ level: 'warn' }));
  try {
    const realmFor = async () => {
      const realm = await getRealmBySubdomain(svc.db, need(values, 'org'));
      if (!realm) throw new UsageError(`no organization with subdomain '${values.org}'`);
      return realm;
    };
    const userFor = async (realmId: number) => {
      const user = await getUserByEmail(svc.db, realmId, need(values, 'email'));
      if (!user) throw new UsageError(`no user '${values.email}' in that organization`);
      return user;
    };
    switch (command) {
      case 'create-org': {
        const password = values['owner-password'] ?? generatePassword();
        const { realm, owner } = await createRealm(svc, {
          subdomain: need(values, 'subdomain'),
          name: need(values, 'name'),
          owner: { email: need(values, 'owner-email'), fullName: values['owner-name'] ?? 'Organization Owner', password },
        });
        out(`created organization ${realm.id} '${realm.name}' (subdomain '${realm.string_id}'); owner ${owner.delivery_email} is user ${owner.id}`);
        if (!values['owner-password']) out(`owner password (shown only now): ${password}`);
        break;
      }
      case 'list-orgs': {
        const realms = await svc.db.selectFrom('realms').selectAll().orderBy('id').execute();
        for (const r of realms) out(`${r.id}\t'${r.string_id}'\t${r.name}${r.deactivated ? '\t(deactivated)' : ''}`);
        break;
      }
      case 'deactivate-org':
      case 'reactivate-org': {
        const realm = await realmFor();
        await setRealmDeactivated(svc, realm.id, command === 'deactivate-org');
        out(`${command === 'deactivate-org' ? 'deactivated' : 'reactivated'} organization '${realm.string_id}'`);
        break;
      }
      case 'create-user': {
        const realm = await realmFor();
        const password = values.password ?? generatePassword();
        const user = await createUserAsOperator(svc, realm, {
          email: need(values, 'email'),
          fullName: need(values, 'name'),
          password,
          role: roleFrom(values.role ?? 'member'),
        });
        out(`created user ${user.id} ${user.delivery_email} with role ${user.role}`);
        if (!values.password) out(`password (shown only now): ${password}`);
        break;
      }
      case 'list-users': {
        const realm = await realmFor();
        for (const u of await listUsers(svc.db, realm.id)) {
          out(`${u.id}\t${u.delivery_email}\t${u.full_name}\trole ${u.role}${u.is_active ? '' : '\t(deactivated)'}`);
        }
        break;
      }
      case 'change-role': {
        const realm = await realmFor();
        const user = await userFor(realm.id);
        await changeRoleAsOperator(svc, realm, user.id, roleFrom(need(values, 'role')));
        out(`user ${user.id} now has role ${need(values, 'role')}`);
        break;
      }
      case 'reset-password': {
        const realm = await realmFor();
        const user = await userFor(realm.id);
        const password = values.password ?? generatePassword();
        await setPasswordAsOperator(svc, realm, user.id, password);
        out(`password of ${user.delivery_email} reset`);
        if (!values.password) out(`new password (shown only now): ${password}`);
        break;
      }
      case 'set-invite-limit': {
        const realm = await realmFor();
        const limit = need(values, 'limit');
        if (limit !== 'default' && !/^\d+$/.test(limit)) throw new UsageError(`--limit is a number of invitations or 'default'`);
        await setDailyInvitationLimit(svc, realm.id, limit === 'default' ? null : Number(limit));
        out(`'${realm.string_id}' may send ${limit === 'default' ? config.invitations.dailyLimit : limit} invitations a day`);
        break;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      out(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ApiError) {
      out(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await svc.markdown.close();
    await close();
    await database.close();
  }
}

if (import.meta.main) {
  process.exitCode = await manage(process.argv.slice(2));
}
