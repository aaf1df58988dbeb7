// Managing invitations: reusable links (POST /invites/multiuse), revoking
// (DELETE /invites/{id}, DELETE /invites/multiuse/{id}), resending
// (POST /invites/{id}/resend) and the daily limit (digest section 2, 1.10, 5.5).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../support/server.ts';
import { startTestServer } from '../support/server.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manage } from '../../src/cli/manage.ts';
import { openDatabase } from '../../src/db/index.ts';
import { ROLE } from '../../src/users/roles.ts';
import {
  freshEmail,
  invitationByLink,
  invitationRows,
  invitationTo,
  invite,
  invitesChangedListeners,
  ok,
  refused,
  setDailyLimit,
  setRealmSetting,
  startInvitationFixture,
} from './invitations.fixture.ts';

const { server, owner, admin, moderator, member, other, guest, sys } = await startInvitationFixture();
after(() => server.close());

const byId = (ids: number[]) => [...ids].sort((a, b) => a - b);
const LINK = /^http:\/\/confab\.test\/join\/[a-z2-7]{24}\/$/;

/** Sends one invitation and returns its id. */
async function invitationId(client: Client, params: Record<string, unknown> = {}): Promise<number> {
  const email = freshEmail();
  ok(await invite(client, email, params));
  return (await invitationTo(server, email)).id;
}

async function createLink(client: Client, params: Record<string, unknown> = {}) {
  const link = ok(await client.post('/invites/multiuse', params)).invite_link;
  assert.match(link, LINK);
  return invitationByLink(server, link);
}

const listedIds = async (client: Client) => ok(await client.get('/invites')).invites.map((i: any) => `${i.is_multiuse ? 'link' : 'email'}:${i.id}`);

test('POST /invites/multiuse: a link with the invitation settings, listed with link_url', async () => {
  const listeners = await invitesChangedListeners([owner, admin, moderator, member]);
  const res = ok(await admin.post('/invites/multiuse'));
  assert.deepEqual(Object.keys(res).sort(), ['invite_link', 'msg', 'result']);
  assert.match(res.invite_link, LINK);
  const listed = ok(await admin.get('/invites')).invites.find((i: any) => i.link_url === res.invite_link);
  assert.equal(listed.is_multiuse, true);
  assert.equal(listed.invited_as, ROLE.MEMBER);
  assert.equal(listed.invited_by_user_id, admin.id);
  assert.equal(listed.expiry_date - listed.invited, 14400 * 60);
  assert.ok(!('email' in listed));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id]));

  const channel = ok(await owner.post('/channels/create', { name: 'link channel', subscribers: [owner.id] })).id;
  const group = ok(await owner.post('/user_groups/create', { name: 'link group', description: '', members: [] })).group_id;
  const row = await createLink(owner, {
    invite_as: ROLE.GUEST,
    invite_expires_in_minutes: null,
    stream_ids: [channel],
    group_ids: [group],
    include_realm_default_subscriptions: true,
    welcome_message_custom_text: 'Hello, guest',
  });
  assert.equal(row.invited_as, ROLE.GUEST);
  assert.equal(row.expires_at, null);
  assert.equal(row.include_realm_default_subscriptions, true);
  assert.equal(row.welcome_message_custom_text, 'Hello, guest');
  assert.equal(row.email, null);
  const channels = await server.svc.db.selectFrom('invitation_channels').select('channel_id').where('invitation_id', '=', row.id).execute();
  assert.deepEqual(
    channels.map((c) => c.channel_id),
    [channel],
  );
  const groups = await server.svc.db.selectFrom('invitation_groups').select('group_id').where('invitation_id', '=', row.id).execute();
  assert.deepEqual(
    groups.map((g) => g.group_id),
    [group],
  );
  refused(await owner.post('/invites/multiuse', { stream_ids: [999999] }), 'Invalid channel ID 999999. No invites were sent.');
  refused(await owner.post('/invites/multiuse', { group_ids: [999999] }), 'Invalid user group');
  refused(await owner.post('/invites/multiuse', { invite_expires_in_minutes: -5 }), 'invite_expires_in_minutes is too small');
  await listeners.close();
});

test("who may create links: create_multiuse_invite_group (administrators by default), roles no higher than one's own", async () => {
  const before = (await invitationRows(server)).length;
  refused(await guest.post('/invites/multiuse'), 'Not allowed for guest users');
  for (const c of [member, moderator]) refused(await c.post('/invites/multiuse'), 'Insufficient permission');
  refused(await admin.post('/invites/multiuse', { invite_as: ROLE.OWNER }), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
  assert.equal((await invitationRows(server)).length, before);
  ok(await owner.post('/invites/multiuse', { invite_as: ROLE.OWNER }));
  await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:members']);
  try {
    refused(await guest.post('/invites/multiuse'), 'Not allowed for guest users');
    const row = await createLink(member, { welcome_message_custom_text: 'not an admin' });
    // Only administrators set the welcome text.
    assert.equal(row.welcome_message_custom_text, null);
    refused(await member.post('/invites/multiuse', { invite_as: ROLE.MODERATOR }), 'Must be an organization moderator', 'UNAUTHORIZED_PRINCIPAL');
    refused(await moderator.post('/invites/multiuse', { invite_as: ROLE.ADMINISTRATOR }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    assert.equal((await createLink(moderator, { invite_as: ROLE.MODERATOR })).invited_as, ROLE.MODERATOR);
    // A member's links are theirs to see.
    assert.ok((await listedIds(member)).includes(`link:${row.id}`));
    assert.ok(!(await listedIds(other)).includes(`link:${row.id}`));
  } finally {
    await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:administrators']);
  }
});

test('DELETE /invites/{id}: the inviter, or an administrator (an owner for invitations as owner)', async () => {
  const listeners = await invitesChangedListeners([owner, admin, moderator, member, other]);
  const mine = await invitationId(member);
  await listeners.heard();
  for (const [c, msg] of [
    [other, 'Must be an organization administrator'],
    [moderator, 'Must be an organization administrator'],
  ] as const) {
    refused(await c.delete(`/invites/${mine}`), msg, 'UNAUTHORIZED_PRINCIPAL');
  }
  refused(await guest.delete(`/invites/${mine}`), 'Not allowed for guest users');
  assert.equal((await invitationRows(server)).find((r) => r.id === mine)!.status, 'pending');
  assert.deepEqual(await listeners.heard(), []);

  assert.deepEqual(ok(await member.delete(`/invites/${mine}`)), { result: 'success', msg: '' });
  assert.ok(!(await listedIds(member)).includes(`email:${mine}`));
  assert.ok(!(await listedIds(admin)).includes(`email:${mine}`));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));
  refused(await member.delete(`/invites/${mine}`), 'Invitation has already been revoked');

  // An administrator revokes anyone's; the inviter hears of it.
  const theirs = await invitationId(member);
  await listeners.heard();
  ok(await admin.delete(`/invites/${theirs}`));
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));

  const asOwner = await invitationId(owner, { invite_as: ROLE.OWNER });
  refused(await admin.delete(`/invites/${asOwner}`), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
  const otherOwner = await server.createUser({ role: ROLE.OWNER });
  ok(await otherOwner.delete(`/invites/${asOwner}`));

  refused(await admin.delete('/invites/999999'), 'No such invitation');
  const link = await createLink(admin);
  refused(await admin.delete(`/invites/${link.id}`), 'No such invitation');

  // A member who may no longer invite still manages their own.
  const kept = await invitationId(member);
  await setRealmSetting(server, 'can_invite_users_group', sys['role:administrators']);
  try {
    assert.ok((await listedIds(member)).includes(`email:${kept}`));
    ok(await member.delete(`/invites/${kept}`));
  } finally {
    await setRealmSetting(server, 'can_invite_users_group', sys['role:members']);
  }
  await listeners.close();
});

test('DELETE /invites/multiuse/{id}: the creator, or an administrator', async () => {
  const listeners = await invitesChangedListeners([owner, admin, member]);
  await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:members']);
  try {
    const mine = await createLink(member);
    await listeners.heard();
    refused(await other.delete(`/invites/multiuse/${mine.id}`), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    refused(await guest.delete(`/invites/multiuse/${mine.id}`), 'Not allowed for guest users');
    assert.deepEqual(await listeners.heard(), []);
    ok(await member.delete(`/invites/multiuse/${mine.id}`));
    assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));
    assert.ok(!(await listedIds(admin)).includes(`link:${mine.id}`));
    refused(await member.delete(`/invites/multiuse/${mine.id}`), 'Invitation has already been revoked');

    const theirs = await createLink(member);
    ok(await admin.delete(`/invites/multiuse/${theirs.id}`));
    const ownerLink = await createLink(owner, { invite_as: ROLE.OWNER });
    refused(await admin.delete(`/invites/multiuse/${ownerLink.id}`), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    ok(await owner.delete(`/invites/multiuse/${ownerLink.id}`));
  } finally {
    await setRealmSetting(server, 'create_multiuse_invite_group', sys['role:administrators']);
  }
  refused(await admin.delete('/invites/multiuse/999999'), 'No such invitation');
  const emailInvitation = await invitationId(admin);
  refused(await admin.delete(`/invites/multiuse/${emailInvitation}`), 'No such invitation');
  await listeners.close();
});

test('POST /invites/{id}/resend: a new link, valid again for as long as at first', async () => {
  const listeners = await invitesChangedListeners([owner, admin, member, other]);
  const id = await invitationId(member, { invite_expires_in_minutes: 60 });
  // Half its time has passed.
  const past = new Date(Date.now() - 30 * 60_000);
  await server.svc.db
    .updateTable('invitations')
    .set({ invited_at: past, expires_at: new Date(past.getTime() + 60 * 60_000) })
    .where('id', '=', id)
    .execute();
  const before = (await invitationRows(server)).find((r) => r.id === id)!;
  await listeners.heard();

  for (const c of [other, moderator]) refused(await c.post(`/invites/${id}/resend`), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  refused(await guest.post(`/invites/${id}/resend`), 'Not allowed for guest users');
  assert.deepEqual(await listeners.heard(), []);

  assert.deepEqual(ok(await member.post(`/invites/${id}/resend`)), { result: 'success', msg: '' });
  const after = (await invitationRows(server)).find((r) => r.id === id)!;
  assert.notEqual(after.token, before.token);
  assert.ok(after.invited_at > before.invited_at);
  assert.equal(after.expires_at!.getTime() - after.invited_at.getTime(), 60 * 60_000);
  const listed = ok(await member.get('/invites')).invites.find((i: any) => i.id === id && !i.is_multiuse);
  assert.equal(listed.expiry_date - listed.invited, 3600);
  assert.deepEqual(await listeners.heard(), byId([owner.id, admin.id, member.id]));

  // An administrator resends anyone's; one that never expires still never does.
  const forever = await invitationId(member, { invite_expires_in_minutes: null });
  ok(await admin.post(`/invites/${forever}/resend`));
  assert.equal((await invitationRows(server)).find((r) => r.id === forever)!.expires_at, null);

  // An expired invitation comes back.
  const expired = await invitationId(member);
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
  await server.svc.db
    .updateTable('invitations')
    .set({ invited_at: hoursAgo(2), expires_at: hoursAgo(1) })
    .where('id', '=', expired)
    .execute();
  assert.ok(!(await listedIds(member)).includes(`email:${expired}`));
  ok(await member.post(`/invites/${expired}/resend`));
  assert.ok((await listedIds(member)).includes(`email:${expired}`));

  const asOwner = await invitationId(owner, { invite_as: ROLE.OWNER });
  refused(await admin.post(`/invites/${asOwner}/resend`), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
  ok(await owner.post(`/invites/${asOwner}/resend`));

  ok(await member.delete(`/invites/${id}`));
  refused(await member.post(`/invites/${id}/resend`), 'No such invitation');
  refused(await admin.post('/invites/999999/resend'), 'No such invitation');
  const link = await createLink(admin);
  refused(await admin.post(`/invites/${link.id}/resend`), 'No such invitation');
  await listeners.close();
});

test("the daily limit: 100 invitations a day by default, an organization's own where set; resends count, links do not", async () => {
  const limitReached = {
    result: 'error',
    msg: 'To protect users, Confab limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
    code: 'INVITATION_FAILED',
    errors: [],
    sent_invitations: false,
    license_limit_reached: false,
    daily_limit_reached: true,
  };
  await server.svc.db.deleteFrom('invitation_sends').execute();
  await setDailyLimit(server, null);
  try {
    const many = Array.from({ length: 99 }, () => freshEmail('bulk'));
    ok(await invite(admin, many));
    const before = (await invitationRows(server)).length;
    // Two more would make 101: none is sent.
    const over = await invite(admin, [freshEmail(), freshEmail()]);
    assert.equal(over.status, 400);
    assert.deepEqual(over.body, limitReached);
    assert.equal((await invitationRows(server)).length, before);
    const last = freshEmail();
    ok(await invite(member, last));
    const lastId = (await invitationTo(server, last)).id;
    assert.deepEqual((await member.post(`/invites/${lastId}/resend`)).body, limitReached);
    assert.deepEqual((await invite(owner, freshEmail())).body, limitReached);
    // Links are not invitation emails.
    ok(await admin.post('/invites/multiuse'));

    // The organization's own limit.
    await setDailyLimit(server, 102);
    ok(await member.post(`/invites/${lastId}/resend`));
    ok(await invite(member, freshEmail()));
    assert.deepEqual((await invite(member, freshEmail())).body, limitReached);

    // Sends older than a day no longer count.
    await server.svc.db
      .updateTable('invitation_sends')
      .set({ sent_at: new Date(Date.now() - 25 * 3_600_000) })
      .execute();
    ok(
      await invite(
        member,
        Array.from({ length: 102 }, () => freshEmail('bulk')),
      ),
    );
    assert.deepEqual((await invite(member, freshEmail())).body, limitReached);
  } finally {
    await setDailyLimit(server, 10_000);
  }
});

test("the server's settings: INVITATION_LINK_VALIDITY_MINUTES and the default daily limit", async () => {
  const small = await startTestServer({ invitations: { validityMinutes: 30, dailyLimit: 1 } });
  try {
    ok(await invite(small.owner, freshEmail()));
    const [row] = await small.svc.db.selectFrom('invitations').selectAll().execute();
    assert.equal(row.expires_at!.getTime() - row.invited_at.getTime(), 30 * 60_000);
    assert.equal((await invite(small.owner, freshEmail())).body.daily_limit_reached, true);
    const link = await invitationByLink(small, ok(await small.owner.post('/invites/multiuse')).invite_link);
    assert.equal(link.expires_at!.getTime() - link.invited_at.getTime(), 30 * 60_000);
  } finally {
    await small.close();
  }
});

test("npm run manage -- set-invite-limit: an organization's own daily limit, or the server's again", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'confab-invite-limit-'));
  const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL };
  process.env.DATA_DIR = dataDir;
  delete process.env.DATABASE_URL;
  try {
    const lines: string[] = [];
    const run = (...args: string[]) => manage(args, (line) => lines.push(line));
    assert.equal(await run('create-org', '--subdomain', 'acme', '--name', 'Acme', '--owner-email', 'boss@acme.example', '--owner-password', 'boss-pass-1'), 0);
    assert.equal(await run('set-invite-limit', '--org', 'acme', '--limit', '7'), 0);
    assert.equal(lines.at(-1), "'acme' may send 7 invitations a day");
    assert.equal(await run('set-invite-limit', '--org', 'acme', '--limit', 'lots'), 2);
    assert.equal(await run('set-invite-limit', '--org', 'nowhere', '--limit', '3'), 2);
    const limits = async () => {
      const { db, close } = await openDatabase({ dataDir });
      try {
        return await db.selectFrom('realm_invite_limits').select('daily_max').execute();
      } finally {
        await close();
      }
    };
    assert.deepEqual(await limits(), [{ daily_max: 7 }]);
    assert.equal(await run('set-invite-limit', '--org', 'acme', '--limit', 'default'), 0);
    assert.equal(lines.at(-1), "'acme' may send 100 invitations a day");
    assert.deepEqual(await limits(), []);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await rm(dataDir, { recursive: true, force: true });
  }
});
