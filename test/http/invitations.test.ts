// Sending invitations: POST /invites with every rule of spec endpoint 10 and
// digest 1.10 (who may invite, as what, into which channels and groups; the
// INVITATION_FAILED variants; the account-age rule), and GET /invites.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import {
  freshEmail,
  invitationRows,
  invitationTo,
  invite,
  invitesChangedListeners,
  ok,
  refused,
  setRealmSetting,
  setRealmSettings,
  startInvitationFixture,
} from './invitations.fixture.ts';

const { server, owner, admin, moderator, member, other, guest, sys } = await startInvitationFixture();
after(() => server.close());

const INVITE_FIELDS = ['email', 'expiry_date', 'id', 'invited', 'invited_as', 'invited_by_user_id', 'is_multiuse', 'notify_referrer_on_join'];

const countRows = async () => (await invitationRows(server)).length;

/** The request is refused and stores no invitation. */
async function refusedAndNothingStored(request: () => Promise<any>, msg: string, code = 'BAD_REQUEST'): Promise<any> {
  const before = await countRows();
  const body = refused(await request(), msg, code);
  assert.equal(await countRows(), before, `"${msg}" stored an invitation`);
  return body;
}

async function createChannel(name: string, params: Record<string, unknown> = {}): Promise<number> {
  return ok(await owner.post('/channels/create', { name, subscribers: [owner.id], ...params })).id;
}

async function channelIdsOf(invitationId: number): Promise<number[]> {
  const rows = await server.svc.db
    .selectFrom('invitation_channels')
    .select('channel_id')
    .where('invitation_id', '=', invitationId)
    .orderBy('channel_id')
    .execute();
  return rows.map((r) => r.channel_id);
}

async function groupIdsOf(invitationId: number): Promise<number[]> {
  const rows = await server.svc.db.selectFrom('invitation_groups').select('group_id').where('invitation_id', '=', invitationId).orderBy('group_id').execute();
  return rows.map((r) => r.group_id);
}

test('POST /invites stores one invitation per address, listed by GET /invites; administrators and the inviter hear invites_changed', async () => {
  const listeners = await invitesChangedListeners([owner, admin, moderator, member, other, guest]);
  const [a, b] = [freshEmail(), freshEmail()];
  const res = await invite(member, `Ann Example <${a}>,\n${b}\n${a.toUpperCase()}, ,`);
  assert.deepEqual(ok(res), { result: 'success', msg: '' });
  const mine = ok(await member.get('/invites')).invites.filter((i: any) => [a, b].includes(i.email));
  assert.deepEqual(
    mine.map((i: any) => i.email),
    [a, b],
  );
  for (const inv of mine) {
    assert.deepEqual(Object.keys(inv).sort(), INVITE_FIELDS);
    assert.equal(inv.invited_by_user_id, member.id);
    assert.equal(inv.invited_as, ROLE.MEMBER);
    assert.equal(inv.is_multiuse, false);
    assert.equal(inv.notify_referrer_on_join, true);
    assert.ok(Math.abs(inv.invited - Date.now() / 1000) < 60);
    // The default validity: 14400 minutes.
    assert.equal(inv.expiry_date - inv.invited, 14400 * 60);
  }
  assert.deepEqual(
    await listeners.heard(),
    [owner.id, admin.id, member.id].sort((x, y) => x - y),
  );
  // notify_referrer_on_join is kept.
  const c = freshEmail();
  ok(await invite(member, c, { notify_referrer_on_join: false }));
  assert.equal(ok(await member.get('/invites')).invites.find((i: any) => i.email === c).notify_referrer_on_join, false);
  await listeners.close();
});

test('invite_expires_in_minutes: minutes from now, null for never; a positive integer', async () => {
  const soon = freshEmail();
  ok(await invite(member, soon, { invite_expires_in_minutes: 60 }));
  const never = freshEmail();
  ok(await invite(member, never, { invite_expires_in_minutes: null }));
  const listed = ok(await member.get('/invites')).invites;
  const s = listed.find((i: any) => i.email === soon);
  assert.equal(s.expiry_date - s.invited, 3600);
  assert.equal(listed.find((i: any) => i.email === never).expiry_date, null);
  await refusedAndNothingStored(() => invite(member, freshEmail(), { invite_expires_in_minutes: 0 }), 'invite_expires_in_minutes is too small');
  await refusedAndNothingStored(() => invite(member, freshEmail(), { invite_expires_in_minutes: 1.5 }), 'invite_expires_in_minutes is not an integer');
  await refusedAndNothingStored(
    () => member.post('/invites', { invitee_emails: freshEmail(), stream_ids: [], invite_expires_in_minutes: 'soon' }),
    'invite_expires_in_minutes is not valid JSON',
  );
});

test('who may invite: never guests; can_invite_users_group decides for everyone else', async () => {
  await refusedAndNothingStored(() => invite(guest, freshEmail()), 'Not allowed for guest users');
  for (const c of [member, moderator, admin, owner]) ok(await invite(c, freshEmail()));
  await setRealmSetting(server, 'can_invite_users_group', sys['role:administrators']);
  try {
    for (const c of [member, moderator]) await refusedAndNothingStored(() => invite(c, freshEmail()), 'Insufficient permission');
    await refusedAndNothingStored(() => invite(guest, freshEmail()), 'Not allowed for guest users');
    for (const c of [admin, owner]) ok(await invite(c, freshEmail()));
    await setRealmSetting(server, 'can_invite_users_group', sys['role:nobody']);
    for (const c of [admin, owner]) await refusedAndNothingStored(() => invite(c, freshEmail()), 'Insufficient permission');
    await setRealmSetting(server, 'can_invite_users_group', sys['role:moderators']);
    await refusedAndNothingStored(() => invite(member, freshEmail()), 'Insufficient permission');
    ok(await invite(moderator, freshEmail()));
  } finally {
    await setRealmSetting(server, 'can_invite_users_group', sys['role:members']);
  }
});

test("invite_as: roles no higher than the caller's own", async () => {
  const OWNER_ONLY = 'Must be an organization owner';
  const ADMIN_ONLY = 'Must be an organization administrator';
  const MODERATOR_ONLY = 'Must be an organization moderator';
  const matrix: [Client, string, (string | null)[]][] = [
    // invite_as:          owner       administrator  moderator       member  guest
    [member, 'member', [OWNER_ONLY, ADMIN_ONLY, MODERATOR_ONLY, null, null]],
    [moderator, 'moderator', [OWNER_ONLY, ADMIN_ONLY, null, null, null]],
    [admin, 'administrator', [OWNER_ONLY, null, null, null, null]],
    [owner, 'owner', [null, null, null, null, null]],
  ];
  const roles = [ROLE.OWNER, ROLE.ADMINISTRATOR, ROLE.MODERATOR, ROLE.MEMBER, ROLE.GUEST];
  for (const [client, name, expected] of matrix) {
    for (const [i, role] of roles.entries()) {
      const email = freshEmail();
      if (expected[i] === null) {
        ok(await invite(client, email, { invite_as: role }));
        assert.equal((await invitationTo(server, email)).invited_as, role, `${name} inviting as ${role}`);
      } else {
        await refusedAndNothingStored(() => invite(client, email, { invite_as: role }), expected[i]!, 'UNAUTHORIZED_PRINCIPAL');
      }
    }
  }
  await refusedAndNothingStored(() => invite(owner, freshEmail(), { invite_as: 500 }), 'Invalid invite_as');
  await refusedAndNothingStored(() => invite(owner, freshEmail(), { invite_as: '"400"' }), 'invite_as is not an integer');
});

test('an invitation needs at least one address, and stream_ids', async () => {
  for (const emails of ['', ' , \n ,']) await refusedAndNothingStored(() => invite(member, emails), 'You must specify at least one email address.');
  const missing = await member.post('/invites', { stream_ids: [] });
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'invitee_emails' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'invitee_emails' });
  const noChannels = await member.post('/invites', { invitee_emails: freshEmail() });
  assert.equal(noChannels.body.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal(noChannels.body.msg, "Missing 'stream_ids' argument");
});

test('stream_ids: default channels, or channels the inviter knows and may subscribe others to', async () => {
  const open = await createChannel('invite open');
  const secret = await createChannel('invite secret', { invite_only: true });
  const archived = await createChannel('invite archived');
  ok(await owner.delete(`/streams/${archived}`));
  const dflt = await createChannel('invite default');
  ok(await owner.post('/default_streams', { stream_id: dflt }));

  for (const id of [999999, secret, archived]) {
    await refusedAndNothingStored(() => invite(member, freshEmail(), { stream_ids: [open, id] }), `Invalid channel ID ${id}. No invites were sent.`);
  }
  const email = freshEmail();
  ok(await invite(member, email, { stream_ids: [open, dflt, open] }));
  assert.deepEqual(await channelIdsOf((await invitationTo(server, email)).id), [open, dflt]);

  // Administrators know private channels and may subscribe anyone.
  const fromAdmin = freshEmail();
  ok(await invite(admin, fromAdmin, { stream_ids: [secret] }));
  assert.deepEqual(await channelIdsOf((await invitationTo(server, fromAdmin)).id), [secret]);

  // Without permission to subscribe others, only default channels.
  await setRealmSetting(server, 'can_add_subscribers_group', sys['role:administrators']);
  try {
    await refusedAndNothingStored(
      () => invite(member, freshEmail(), { stream_ids: [dflt, open] }),
      'You do not have permission to subscribe other users to channels.',
    );
    ok(await invite(member, freshEmail(), { stream_ids: [dflt] }));
    ok(await invite(member, freshEmail(), { stream_ids: [] }));
    ok(await invite(admin, freshEmail(), { stream_ids: [open] }));
  } finally {
    await setRealmSetting(server, 'can_add_subscribers_group', sys['role:members']);
  }
});

test('group_ids: groups the inviter may add members to', async () => {
  const mine = ok(await member.post('/user_groups/create', { name: 'invite group', description: '', members: [] })).group_id;
  const gone = ok(await member.post('/user_groups/create', { name: 'invite gone group', description: '', members: [] })).group_id;
  ok(await member.post(`/user_groups/${gone}/deactivate`));

  const email = freshEmail();
  ok(await invite(member, email, { group_ids: [mine, mine] }));
  assert.deepEqual(await groupIdsOf((await invitationTo(server, email)).id), [mine]);
  // Its creator may add members; another member, or an administrator (not a manager of all groups), may not.
  for (const c of [other, admin]) await refusedAndNothingStored(() => invite(c, freshEmail(), { group_ids: [mine] }), 'Insufficient permission');
  ok(await invite(owner, freshEmail(), { group_ids: [mine] }));
  await refusedAndNothingStored(() => invite(owner, freshEmail(), { group_ids: [sys['role:members']] }), 'Insufficient permission');
  await refusedAndNothingStored(() => invite(member, freshEmail(), { group_ids: [999999] }), 'Invalid user group');
  await refusedAndNothingStored(() => invite(member, freshEmail(), { group_ids: [gone] }), 'User group is deactivated.');
  await refusedAndNothingStored(() => invite(member, freshEmail(), { group_ids: 'x' }), 'group_ids is not valid JSON');
});

test('welcome_message_custom_text: administrators only, at most 8000 characters', async () => {
  const fromAdmin = freshEmail();
  ok(await invite(admin, fromAdmin, { welcome_message_custom_text: 'Welcome to **the team**!' }));
  assert.equal((await invitationTo(server, fromAdmin)).welcome_message_custom_text, 'Welcome to **the team**!');
  const empty = freshEmail();
  ok(await invite(owner, empty, { welcome_message_custom_text: '' }));
  assert.equal((await invitationTo(server, empty)).welcome_message_custom_text, '');
  const longest = freshEmail();
  ok(await invite(admin, longest, { welcome_message_custom_text: 'x'.repeat(8000) }));
  assert.equal((await invitationTo(server, longest)).welcome_message_custom_text?.length, 8000);
  await refusedAndNothingStored(
    () => invite(admin, freshEmail(), { welcome_message_custom_text: 'x'.repeat(8001) }),
    'welcome_message_custom_text is too long (limit: 8000 characters)',
  );
  // Anyone else's text is not used: the invitation falls back to the organization's.
  for (const c of [member, moderator]) {
    const email = freshEmail();
    ok(await invite(c, email, { welcome_message_custom_text: 'Hi from me' }));
    assert.equal((await invitationTo(server, email)).welcome_message_custom_text, null);
  }
});

test('INVITATION_FAILED: addresses that already have accounts are skipped, everyone else is invited', async () => {
  const listeners = await invitesChangedListeners([admin, member]);
  const fresh = freshEmail();
  const res = await invite(member, [member.email!, fresh]);
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, {
    result: 'error',
    msg: "Some of those addresses are already using Confab, so we didn't send them an invitation. We did send invitations to everyone else!",
    code: 'INVITATION_FAILED',
    errors: [[member.email, 'Already has an account.', false]],
    sent_invitations: true,
    license_limit_reached: false,
    daily_limit_reached: false,
  });
  assert.equal((await invitationTo(server, fresh)).status, 'pending');
  assert.deepEqual(
    await listeners.heard(),
    [admin.id, member.id].sort((x, y) => x - y),
  );

  // A deactivated account counts too, with the flag; addresses compare without case.
  const leaving = await server.createUser({ email: freshEmail('leaving') });
  ok(await owner.delete(`/users/${leaving.id}`));
  const fresh2 = freshEmail();
  const shouted = leaving.email!.toUpperCase();
  const deactivated = refused(await invite(member, [shouted, fresh2]), res.body.msg, 'INVITATION_FAILED');
  assert.deepEqual(deactivated.errors, [[shouted, 'Already has an account.', true]]);
  assert.equal(deactivated.sent_invitations, true);
  assert.equal((await invitationTo(server, fresh2)).email, fresh2);
  assert.deepEqual(
    await listeners.heard(),
    [admin.id, member.id].sort((x, y) => x - y),
  );

  // Nobody left to invite.
  const none = await refusedAndNothingStored(() => invite(member, [admin.email!, leaving.email!]), "We weren't able to invite anyone.", 'INVITATION_FAILED');
  assert.deepEqual(none.errors, [
    [admin.email, 'Already has an account.', false],
    [leaving.email, 'Already has an account.', true],
  ]);
  assert.equal(none.sent_invitations, false);
  assert.equal(none.daily_limit_reached, false);
  assert.deepEqual(await listeners.heard(), []);
  await listeners.close();
});

test('INVITATION_FAILED: any invalid address and nothing is sent', async () => {
  const body = await refusedAndNothingStored(
    () => invite(member, ['not-an-address', freshEmail(), member.email!]),
    "Some emails did not validate, so we didn't send any invitations.",
    'INVITATION_FAILED',
  );
  assert.deepEqual(body.errors, [
    ['not-an-address', 'Invalid address.', false],
    [member.email, 'Already has an account.', false],
  ]);
  assert.equal(body.sent_invitations, false);
  assert.equal(body.license_limit_reached, false);

  // Disposable addresses, where the organization refuses them (the default).
  const disposable = await refusedAndNothingStored(
    () => invite(member, ['someone@mailinator.com', freshEmail()]),
    "Some emails did not validate, so we didn't send any invitations.",
    'INVITATION_FAILED',
  );
  assert.deepEqual(disposable.errors, [['someone@mailinator.com', 'Please use your real email address.', false]]);
  await setRealmSettings(server, { disallow_disposable_email_addresses: false });
  try {
    ok(await invite(member, `throwaway${process.pid}@mailinator.com`));
    // An organization restricted to its domains (it has none listed yet) admits no address.
    await setRealmSettings(server, { emails_restricted_to_domains: true });
    const restricted = await refusedAndNothingStored(
      () => invite(member, ['a+b@example.org', 'c@example.org']),
      "Some emails did not validate, so we didn't send any invitations.",
      'INVITATION_FAILED',
    );
    assert.deepEqual(restricted.errors, [
      ['a+b@example.org', 'Email addresses containing + are not allowed.', false],
      ['c@example.org', 'Outside your domain.', false],
    ]);
  } finally {
    await setRealmSettings(server, { disallow_disposable_email_addresses: true, emails_restricted_to_domains: false });
  }
});

test('accounts younger than three days may not invite into an organization anyone can join', async () => {
  const newcomer = await server.createUser({ role: ROLE.MEMBER });
  const newModerator = await server.createUser({ role: ROLE.MODERATOR });
  const newAdmin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  // Invitations required (the default): age does not matter.
  ok(await invite(newcomer, freshEmail()));
  await setRealmSettings(server, { invite_required: false });
  try {
    for (const c of [newcomer, newModerator]) {
      const body = await refusedAndNothingStored(
        () => invite(c, freshEmail()),
        'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
        'INVITATION_FAILED',
      );
      assert.deepEqual(body.errors, []);
      assert.equal(body.sent_invitations, false);
      assert.equal(body.daily_limit_reached, false);
    }
    ok(await invite(newAdmin, freshEmail()));
    const fourDaysAgo = new Date(Date.now() - 4 * 86_400_000);
    await server.svc.db.updateTable('users').set({ date_joined: fourDaysAgo }).where('id', '=', newcomer.id).execute();
    ok(await invite(newcomer, freshEmail()));
    // Reusable links are not limited by age.
    await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:members']);
    ok(await newModerator.post('/invites/multiuse', {}));
  } finally {
    await setRealmSettings(server, { invite_required: true });
    await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:administrators']);
  }
});

test('GET /invites: administrators see every live invitation, other members their own, guests none', async () => {
  const byMember = freshEmail();
  const byModerator = freshEmail();
  const byOwner = freshEmail();
  ok(await invite(member, byMember));
  ok(await invite(moderator, byModerator));
  ok(await invite(owner, byOwner, { invite_as: ROLE.OWNER }));
  const link = ok(await admin.post('/invites/multiuse', { invite_as: ROLE.GUEST, invite_expires_in_minutes: null })).invite_link;
  const expired = freshEmail();
  ok(await invite(member, expired));
  await server.svc.db
    .updateTable('invitations')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('email', '=', expired)
    .execute();

  const emailsOf = (invites: any[]) => invites.filter((i) => !i.is_multiuse).map((i) => i.email);
  const memberView = ok(await member.get('/invites')).invites;
  assert.ok(memberView.every((i: any) => i.invited_by_user_id === member.id));
  assert.ok(emailsOf(memberView).includes(byMember));
  assert.ok(!emailsOf(memberView).includes(expired));
  assert.ok(!memberView.some((i: any) => i.is_multiuse));
  assert.ok(ok(await moderator.get('/invites')).invites.every((i: any) => i.invited_by_user_id === moderator.id));

  for (const c of [admin, owner]) {
    const all = ok(await c.get('/invites')).invites;
    for (const e of [byMember, byModerator, byOwner]) assert.ok(emailsOf(all).includes(e), `${e} missing for ${c.id}`);
    assert.ok(!emailsOf(all).includes(expired));
    // Email invitations first, then links, each oldest first.
    const firstLink = all.findIndex((i: any) => i.is_multiuse);
    assert.ok(all.slice(firstLink).every((i: any) => i.is_multiuse));
    assert.deepEqual(
      all.slice(0, firstLink).map((i: any) => i.id),
      all
        .slice(0, firstLink)
        .map((i: any) => i.id)
        .sort((x: number, y: number) => x - y),
    );
    const multiuse = all.find((i: any) => i.link_url === link);
    assert.deepEqual(
      Object.keys(multiuse).sort(),
      INVITE_FIELDS.filter((f) => f !== 'email')
        .concat('link_url')
        .sort(),
    );
    assert.equal(multiuse.invited_as, ROLE.GUEST);
    assert.equal(multiuse.expiry_date, null);
    assert.equal(multiuse.invited_by_user_id, admin.id);
  }
  refused(await guest.get('/invites'), 'Not allowed for guest users');
});
