// Accepting an invitation (POST /invites/accept, ours: docs/DECISIONS.md): the
// link's key becomes a working account with the invitation's role, channels and
// groups, announced as any new account is; spent, revoked and expired
// invitations are refused, and a refused acceptance creates nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { setRealmDeactivated } from '../../src/realm/actions.ts';
import {
  freshEmail,
  invitationTo,
  invite,
  invitesChangedListeners,
  ok,
  refused,
  setRealmSetting,
  startInvitationFixture,
  tokenOfLink,
} from './invitations.fixture.ts';

const { server, owner, admin, member, other, guest, sys } = await startInvitationFixture();
after(() => server.close());

const PASSWORD = 'a-good-password';
const byId = (ids: number[]) => [...ids].sort((a, b) => a - b);

function accept(params: Record<string, unknown>, host?: string) {
  return server.anonymous.post('/invites/accept', { full_name: 'New Person', password: PASSWORD, ...params }, host ? { host } : {});
}

async function userCount(): Promise<number> {
  return Number(
    (
      await server.svc.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
}

/** The acceptance is refused and creates no account. */
async function refusedAndNoAccount(request: () => Promise<any>, msg: string, code = 'BAD_REQUEST', status = 400): Promise<void> {
  const before = await userCount();
  const res = await request();
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.msg, msg);
  assert.equal(res.body.code, code);
  assert.equal(await userCount(), before, `"${msg}" created an account`);
}

const channel = async (name: string, params: Record<string, unknown> = {}) =>
  ok(await owner.post('/channels/create', { name, subscribers: [owner.id], ...params })).id as number;

const subscribedNames = async (c: Client) =>
  ok(await c.get('/users/me/subscriptions'))
    .subscriptions.map((s: any) => s.name)
    .sort();

test('invite, accept, log in: the account has the role, channels and groups the invitation named, and everyone hears of it', async () => {
  const secret = await channel('welcome secret', { invite_only: true });
  const open = await channel('welcome open');
  const dflt = await channel('welcome default');
  ok(await owner.post('/default_streams', { stream_id: dflt }));
  await channel('welcome elsewhere');
  const team = ok(await owner.post('/user_groups/create', { name: 'welcome team', description: '', members: [owner.id] })).group_id;

  const viewers = [await registerViewer(server, member), await registerViewer(server, owner), await registerViewer(server, guest)];
  const sync = async (label: string) => {
    for (const v of viewers) await expectStateInSync(server, v, `${label} (viewer ${v.client.id})`);
  };
  const userEvents = ok(await other.post('/register', { event_types: ['realm_user'] }));
  const listeners = await invitesChangedListeners([owner, admin, member]);

  const email = freshEmail('newbie');
  ok(
    await invite(owner, email, {
      invite_as: ROLE.MODERATOR,
      stream_ids: [secret, open],
      group_ids: [team],
      include_realm_default_subscriptions: true,
    }),
  );
  await sync('after inviting');
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id]));
  const invitation = await invitationTo(server, email);

  const res = ok(await accept({ key: invitation.token, full_name: '  New Bie  ' }));
  assert.deepEqual(Object.keys(res).sort(), ['api_key', 'email', 'msg', 'result', 'user_id']);
  assert.equal(res.email, email);
  assert.match(res.api_key, /^[A-Za-z0-9]{32}$/);

  // The new user logs in with the password chosen, and the key works at once.
  const login = ok(await server.anonymous.post('/fetch_api_key', { username: email, password: PASSWORD }));
  assert.deepEqual([login.user_id, login.api_key, login.email], [res.user_id, res.api_key, email]);
  const newbie = new Client(server, res.user_id, email, res.api_key);
  const me = ok(await newbie.get('/users/me'));
  assert.equal(me.role, ROLE.MODERATOR);
  assert.equal(me.full_name, 'New Bie');
  assert.deepEqual(await subscribedNames(newbie), ['welcome default', 'welcome open', 'welcome secret']);
  assert.ok(ok(await newbie.get(`/user_groups/${team}/members`)).members.includes(res.user_id));
  assert.ok(ok(await newbie.get(`/user_groups/${sys['role:moderators']}/members`)).members.includes(res.user_id));
  ok(await newbie.post('/register', {}));

  // Everyone else's queues heard of the account (and its groups and subscriptions): state stays in sync.
  const heard = ok(await other.get('/events', { queue_id: userEvents.queue_id, last_event_id: -1, dont_block: true })).events;
  const added = heard.find((e: any) => e.type === 'realm_user' && e.op === 'add');
  assert.equal(added.person.user_id, res.user_id);
  assert.equal(added.person.role, ROLE.MODERATOR);
  assert.equal(added.person.full_name, 'New Bie');
  await sync('after accepting');
  // The invitation is spent: gone from the list; administrators and the inviter hear of it.
  assert.equal((await invitationTo(server, email)).status, 'used');
  assert.equal((await invitationTo(server, email)).created_user_id, res.user_id);
  assert.ok(!ok(await owner.get('/invites')).invites.some((i: any) => i.email === email));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id]));
  refused(await owner.delete(`/invites/${invitation.id}`), 'No such invitation');
  refused(await owner.post(`/invites/${invitation.id}/resend`), 'No such invitation');
  await refusedAndNoAccount(() => accept({ key: invitation.token }), 'This invitation has already been used.');
  await listeners.close();
  await other.delete('/events', { queue_id: userEvents.queue_id });
});

test('an email invitation is for its address; the channels and groups are only those it names', async () => {
  const email = freshEmail('plain');
  ok(await invite(member, email));
  const { token } = await invitationTo(server, email);
  await refusedAndNoAccount(() => accept({ key: token, email: freshEmail() }), 'This invitation was sent to another email address.');
  const res = ok(await accept({ key: token, email: email.toUpperCase() }));
  const user = new Client(server, res.user_id, email, res.api_key);
  const me = ok(await user.get('/users/me'));
  assert.equal(me.role, ROLE.MEMBER);
  assert.equal(me.delivery_email, email);
  // No default channels unless the invitation says so.
  assert.deepEqual(await subscribedNames(user), []);
});

test('refused: unknown, revoked, expired and replaced links; weak passwords and bad names; addresses already in use', async () => {
  await refusedAndNoAccount(() => accept({ key: 'abcdefghijklmnopqrstuvwx' }), 'Invalid invitation link.');
  await refusedAndNoAccount(() => accept({ key: '' }), 'Invalid invitation link.');

  const revoked = freshEmail();
  ok(await invite(member, revoked));
  const r = await invitationTo(server, revoked);
  ok(await member.delete(`/invites/${r.id}`));
  await refusedAndNoAccount(() => accept({ key: r.token }), 'This invitation has been revoked.');

  const expired = freshEmail();
  ok(await invite(member, expired, { invite_expires_in_minutes: 5 }));
  const e = await invitationTo(server, expired);
  await server.svc.db
    .updateTable('invitations')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', e.id)
    .execute();
  await refusedAndNoAccount(() => accept({ key: e.token }), 'This invitation has expired.');

  // A resent invitation has a new link; the old one is dead.
  const resent = freshEmail();
  ok(await invite(member, resent));
  const first = await invitationTo(server, resent);
  ok(await member.post(`/invites/${first.id}/resend`));
  await refusedAndNoAccount(() => accept({ key: first.token }), 'Invalid invitation link.');
  const { token } = await invitationTo(server, resent);

  await refusedAndNoAccount(() => accept({ key: token, password: 'short' }), 'The password is too weak.');
  await refusedAndNoAccount(() => accept({ key: token, full_name: 'X' }), 'Name too short!');
  await refusedAndNoAccount(() => accept({ key: token, full_name: 'Bad @name' }), 'Invalid characters in name!');
  const missing = await server.anonymous.post('/invites/accept', { key: token, full_name: 'No Password' });
  assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  // Nothing was spent by the refusals.
  assert.equal((await invitationTo(server, resent)).status, 'pending');

  // Someone made the account meanwhile: that spent the invitation.
  await server.createUser({ email: resent });
  await refusedAndNoAccount(() => accept({ key: token }), 'This invitation has been revoked.');
});

test('a reusable link: an address per acceptance, until revoked; other invitations to that address are spent', async () => {
  const open = await channel('link open');
  const group = ok(await owner.post('/user_groups/create', { name: 'link joiners', description: '', members: [] })).group_id;
  const archived = await channel('link archived');
  const link = ok(await owner.post('/invites/multiuse', { invite_as: ROLE.GUEST, stream_ids: [open, archived], group_ids: [group] })).invite_link;
  ok(await owner.delete(`/streams/${archived}`));
  const key = tokenOfLink(link);

  const missing = await accept({ key });
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'email' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'email' });
  await refusedAndNoAccount(() => accept({ key, email: 'nobody' }), 'Invalid address.');
  await refusedAndNoAccount(() => accept({ key, email: 'x@mailinator.com' }), 'Please use your real email address.');
  await refusedAndNoAccount(() => accept({ key, email: member.email }), 'Email is already in use.');

  // A pending email invitation to the same address, from someone else, is spent by joining through the link.
  const first = freshEmail('joiner');
  ok(await invite(member, first));
  const listeners = await invitesChangedListeners([owner, admin, member, other]);
  const a = ok(await accept({ key, email: first }));
  assert.equal((await invitationTo(server, first)).status, 'revoked');
  assert.ok(!ok(await member.get('/invites')).invites.some((i: any) => i.email === first));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));

  const second = freshEmail('joiner');
  const b = ok(await accept({ key, email: second }));
  for (const [res, email] of [
    [a, first],
    [b, second],
  ] as const) {
    const user = new Client(server, res.user_id, email, res.api_key);
    assert.equal(ok(await user.get('/users/me')).role, ROLE.GUEST);
    // The archived channel is skipped.
    assert.deepEqual(await subscribedNames(user), ['link open']);
    assert.ok(ok(await owner.get(`/user_groups/${group}/members`)).members.includes(res.user_id));
  }
  // The link stays until revoked.
  const listed = ok(await owner.get('/invites')).invites.find((i: any) => i.link_url === link);
  ok(await owner.delete(`/invites/multiuse/${listed.id}`));
  await refusedAndNoAccount(() => accept({ key, email: freshEmail() }), 'This invitation has been revoked.');
  await listeners.close();
});

test('an invitation works only in its own organization, and not in a deactivated one', async () => {
  const boss = await server.createOrganization('elsewhere');
  const host = boss.host!;
  const email = freshEmail('abroad');
  ok(await invite(boss, email));
  const { token } = await invitationTo(server, email);
  // The root organization knows nothing of it, and another organization's lists do not show it.
  await refusedAndNoAccount(() => accept({ key: token }), 'Invalid invitation link.');
  assert.ok(!ok(await owner.get('/invites')).invites.some((i: any) => i.email === email));
  refused(await owner.delete(`/invites/${(await invitationTo(server, email)).id}`), 'No such invitation');
  await refusedAndNoAccount(() => accept({ key: token }, 'nowhere.confab.test'), 'Invalid subdomain', 'NONEXISTENT_SUBDOMAIN', 404);

  await setRealmDeactivated(server.svc, boss.realmId, true);
  await refusedAndNoAccount(() => accept({ key: token }, host), 'This organization has been deactivated', 'REALM_DEACTIVATED', 401);
  await setRealmDeactivated(server.svc, boss.realmId, false);
  const res = ok(await accept({ key: token }, host));
  const user = await server.svc.db.selectFrom('users').select('realm_id').where('id', '=', res.user_id).executeTakeFirstOrThrow();
  assert.equal(user.realm_id, boss.realmId);
});

test('the invitations of a deactivated account are revoked', async () => {
  const leaving = await server.createUser({ role: ROLE.MEMBER });
  const email = freshEmail('orphan');
  ok(await invite(leaving, email));
  await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:members']);
  const link = ok(await leaving.post('/invites/multiuse')).invite_link;
  await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:administrators']);
  const { id, token } = await invitationTo(server, email);
  ok(await owner.delete(`/users/${leaving.id}`));

  const listed = ok(await admin.get('/invites')).invites;
  assert.ok(!listed.some((i: any) => i.email === email || i.link_url === link));
  await refusedAndNoAccount(() => accept({ key: token }), 'This invitation has been revoked.');
  await refusedAndNoAccount(() => accept({ key: tokenOfLink(link), email: freshEmail() }), 'This invitation has been revoked.');
  refused(await admin.post(`/invites/${id}/resend`), 'No such invitation');
  refused(await admin.delete(`/invites/${id}`), 'Invitation has already been revoked');

  // For good: coming back does not bring them back (the reference revokes them on deactivation).
  ok(await owner.post(`/users/${leaving.id}/reactivate`));
  assert.equal((await invitationTo(server, email)).status, 'revoked');
  assert.ok(!ok(await admin.get('/invites')).invites.some((i: any) => i.email === email || i.link_url === link));
  await refusedAndNoAccount(() => accept({ key: token }), 'This invitation has been revoked.');
  await refusedAndNoAccount(() => accept({ key: tokenOfLink(link), email: freshEmail() }), 'This invitation has been revoked.');
});

test('deactivating an inviter tells administrators their invitations are gone', async () => {
  const leaving = await server.createUser({ role: ROLE.MEMBER });
  ok(await invite(leaving, freshEmail('orphan')));
  const listeners = await invitesChangedListeners([owner, admin, member]);
  ok(await owner.delete(`/users/${leaving.id}`));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id]));
  // Someone with nothing pending leaves quietly.
  const quiet = await server.createUser({ role: ROLE.MEMBER });
  ok(await owner.delete(`/users/${quiet.id}`));
  assert.deepEqual(await listeners.heard(), []);
  await listeners.close();
});

test('an account created another way spends the invitations to its address', async () => {
  const email = freshEmail('direct');
  ok(await invite(member, email));
  ok(await invite(admin, email.toUpperCase()));
  const { token } = await invitationTo(server, email);
  const listeners = await invitesChangedListeners([owner, admin, member, other]);
  await server.svc.db.updateTable('users').set({ can_create_users: true }).where('id', '=', owner.id).execute();
  ok(await owner.post('/users', { email, password: PASSWORD, full_name: 'Direct Person' }));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));
  assert.ok(!ok(await admin.get('/invites')).invites.some((i: any) => i.email.toLowerCase() === email));
  const rows = await server.svc.db
    .selectFrom('invitations')
    .select('status')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
    .execute();
  assert.deepEqual(
    rows.map((r) => r.status),
    ['revoked', 'revoked'],
  );
  await refusedAndNoAccount(() => accept({ key: token }), 'This invitation has been revoked.');
  await listeners.close();
});
