// Shared by the user-group test files: a server with one user of each role, and
// the request helpers they use.
import assert from 'node:assert/strict';
import { startTestServer, type Client, type Response, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

export interface GroupFixture {
  server: TestServer;
  owner: Client;
  admin: Client;
  moderator: Client;
  member: Client;
  other: Client;
  guest: Client;
  sys: Record<SystemGroupName, number>;
}

export async function startGroupFixture(): Promise<GroupFixture> {
  // Organization settings are changed in the database by the tests: no cached organization rows.
  const server = await startTestServer({ credentialCacheMs: 0 });
  return {
    server,
    owner: server.owner,
    admin: await server.createUser({ role: ROLE.ADMINISTRATOR }),
    moderator: await server.createUser({ role: ROLE.MODERATOR }),
    member: await server.createUser({ role: ROLE.MEMBER }),
    other: await server.createUser({ role: ROLE.MEMBER }),
    guest: await server.createUser({ role: ROLE.GUEST }),
    sys: await systemGroupIds(server.svc.db, 1),
  };
}

export function ok(res: Response): any {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result, 'success');
  return res.body;
}

/** A 400 with this message and code; returns the body for its other fields. */
export function refused(res: Response, msg: string, code = 'BAD_REQUEST'): any {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.result, 'error');
  assert.equal(res.body.msg, msg);
  assert.equal(res.body.code, code);
  return res.body;
}

let counter = 0;
export const uniqueName = () => `group ${++counter}`;

/** Creates a group through the API and returns its id. */
export async function createGroup(client: Client, params: Record<string, unknown> = {}): Promise<number> {
  return ok(await client.post('/user_groups/create', { name: uniqueName(), description: 'A group', members: [], ...params })).group_id;
}

/** Sets an organization permission setting directly (no endpoint changes them yet). */
export async function setRealmSetting(server: TestServer, setting: string, groupId: number): Promise<void> {
  const realm = await server.svc.db.selectFrom('realms').select('group_settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ group_settings: JSON.stringify({ ...realm.group_settings, [setting]: groupId }) })
    .where('id', '=', 1)
    .execute();
}
