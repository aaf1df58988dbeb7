// Markdown in messages, through HTTP (issue 7): references resolve against the
// organization (channels, topics, groups), what the renderer reports drives
// the message flags, and a message that cannot be rendered is refused cleanly.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { RenderPool } from '../../src/markdown/index.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [admin.id, alice.id, bob.id, carol.id] });
});
after(() => server.close());

async function send(c: Client, content: string, topic = 'markdown', to = 'Denmark'): Promise<number> {
  const res = await c.post('/messages', { type: 'stream', to, topic, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}
const html = async (id: number) => (await admin.get(`/messages/${id}`)).body.message.content as string;
const flagsOf = async (c: Client, id: number) => (await c.get(`/messages/${id}`)).body.message.flags as string[];
const channelId = async (name: string) => (await admin.get('/get_stream_id', { stream: name })).body.stream_id as number;

test('channel, topic and message links resolve against the organization', async () => {
  const denmark = await channelId('Denmark');
  const latest = await send(alice, 'first', 'Some Topic');
  const id = await send(alice, '#**Denmark** #**Denmark>some topic** #**Denmark>quiet** #**Denmark>x@12** #**Nowhere** #**denmark**');
  assert.equal(
    await html(id),
    `<p><a class="stream" data-stream-id="${denmark}" href="/#narrow/channel/${denmark}-Denmark">#Denmark</a> ` +
      `<a class="stream-topic" data-stream-id="${denmark}" href="/#narrow/channel/${denmark}-Denmark/topic/some.20topic/with/${latest}">#Denmark &gt; some topic</a> ` +
      `<a class="stream-topic" data-stream-id="${denmark}" href="/#narrow/channel/${denmark}-Denmark/topic/quiet">#Denmark &gt; quiet</a> ` +
      `<a class="message-link" href="/#narrow/channel/${denmark}-Denmark/topic/x/near/12">#Denmark &gt; x @ 💬</a> ` +
      '#<strong>Nowhere</strong> #<strong>denmark</strong></p>',
  );
  // Archived channels are not linked (the reference links active channels only).
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Old times' }] });
  assert.equal((await admin.delete(`/streams/${await channelId('Old times')}`)).status, 200);
  assert.equal(await html(await send(alice, 'see #**Old times**')), '<p>see #<strong>Old times</strong></p>');
});

test('group mentions flag the members (subgroups too); silent, quoted and code mentions flag nobody', async () => {
  const inner = await admin.post('/user_groups/create', { name: 'Inner', description: '', members: [carol.id] });
  assert.equal(inner.status, 200, JSON.stringify(inner.body));
  const outer = await admin.post('/user_groups/create', { name: 'Outer', description: '', members: [bob.id], subgroups: [inner.body.group_id] });
  assert.equal(outer.status, 200, JSON.stringify(outer.body));

  const id = await send(alice, 'hi @*outer*');
  assert.equal(await html(id), `<p>hi <span class="user-group-mention" data-user-group-id="${outer.body.group_id}">@Outer</span></p>`);
  assert.ok((await flagsOf(bob, id)).includes('mentioned'));
  assert.ok((await flagsOf(carol, id)).includes('mentioned'), 'a member through a subgroup');
  assert.ok(!(await flagsOf(admin, id)).includes('mentioned'));

  for (const content of ['hi @_*Outer*', '> @*Outer* said', '`@*Outer*`', '```\n@*Outer* @**Bob Baker** @**all**\n```', '> @**Bob Baker** @**all**']) {
    const quiet = await send(alice, content);
    assert.deepEqual(await flagsOf(bob, quiet), [], content);
    assert.deepEqual(await flagsOf(carol, quiet), [], content);
  }
});

test('user mentions by id and every wildcard spelling set their flags', async () => {
  const byId = await send(alice, `@**Bob Baker|${bob.id}** and @**|${carol.id}**`);
  assert.ok((await flagsOf(bob, byId)).includes('mentioned'));
  assert.ok((await flagsOf(carol, byId)).includes('mentioned'));
  const wrongName = await send(alice, `@**Someone Else|${bob.id}**`);
  assert.ok(!(await flagsOf(bob, wrongName)).includes('mentioned'), 'with |id the name must match');

  for (const word of ['all', 'everyone', 'channel', 'stream']) {
    const id = await send(alice, `@**${word}** look`);
    assert.equal(await html(id), `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${word}</span> look</p>`);
    assert.deepEqual(await flagsOf(bob, id), ['stream_wildcard_mentioned', 'wildcard_mentioned'], word);
  }
  const silent = await send(alice, '@_**all** @_**topic**');
  assert.deepEqual(await flagsOf(bob, silent), [], 'silent wildcards notify nobody');

  // In direct messages a channel wildcard reaches every recipient.
  const dm = await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id, carol.id]), content: '@**all** hello' });
  assert.equal(dm.status, 200, JSON.stringify(dm.body));
  assert.ok((await flagsOf(carol, dm.body.id)).includes('stream_wildcard_mentioned'));
});

test('a message that cannot be rendered is refused and nothing changes', async () => {
  const id = await send(alice, 'to be edited');
  const newest = async () => (await admin.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages[0].id;
  const before = await newest();
  const original = server.svc.markdown;
  const tiny = new RenderPool({ size: 1, maxOutputLength: 40 });
  (server.svc as { markdown: RenderPool }).markdown = tiny;
  try {
    const long = 'this renders to more than forty characters of HTML';
    const refused = await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'markdown', content: long });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { result: 'error', msg: 'Unable to render message', code: 'BAD_REQUEST' });
    const edit = await alice.patch(`/messages/${id}`, { content: long });
    assert.deepEqual(edit.body, { result: 'error', msg: 'Unable to render message', code: 'BAD_REQUEST' });
  } finally {
    (server.svc as { markdown: RenderPool }).markdown = original;
    await tiny.close();
  }
  assert.equal(await newest(), before, 'no message was stored');
  assert.equal(await html(id), '<p>to be edited</p>', 'the edit changed nothing');
});

test('mentions resolve only to users their author may see (can_access_all_users_group)', async () => {
  const groups = (await server.owner.get('/user_groups')).body.user_groups;
  const sys = (name: string) => groups.find((g: { name: string }) => g.name === name).id as number;
  assert.equal((await server.owner.patch('/realm', { can_access_all_users_group: { new: sys('role:members') } })).status, 200);
  try {
    const guest = await server.createUser({ role: ROLE.GUEST, email: 'gus@example.com', fullName: 'Gus Guest' });
    await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Guest room' }], principals: [guest.id, alice.id] });
    // Alice shares a channel with the guest; Bob does not, so to the guest he does not exist.
    const id = await send(guest, `@**Alice Able** @**Bob Baker** @**Bob Baker|${bob.id}** @_**Bob Baker**`, 'hello', 'Guest room');
    assert.equal(
      await html(id),
      `<p><span class="user-mention" data-user-id="${alice.id}">@Alice Able</span> @<strong>Bob Baker</strong> ` +
        `@<strong>Bob Baker|${bob.id}</strong> @_<strong>Bob Baker</strong></p>`,
    );
    assert.ok((await flagsOf(alice, id)).includes('mentioned'));
    // Members see everyone: the same text from Alice mentions Bob.
    const fromAlice = await send(alice, '@**Bob Baker**');
    assert.equal(await html(fromAlice), `<p><span class="user-mention" data-user-id="${bob.id}">@Bob Baker</span></p>`);
    assert.ok((await flagsOf(bob, fromAlice)).includes('mentioned'));
  } finally {
    assert.equal((await server.owner.patch('/realm', { can_access_all_users_group: { new: sys('role:everyone') } })).status, 200);
  }
});

test("a topic link names the topic's latest message only to authors who may read the channel", async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret plans' }], invite_only: true });
  const secret = await channelId('Secret plans');
  const latest = await send(admin, 'the plan', 'heist', 'Secret plans');
  const bare = `/#narrow/channel/${secret}-Secret-plans/topic/heist`;
  // Alice cannot read the channel: the link goes to the topic, with no message id.
  const fromAlice = await send(alice, '#**Secret plans>heist**');
  assert.equal(await html(fromAlice), `<p><a class="stream-topic" data-stream-id="${secret}" href="${bare}">#Secret plans &gt; heist</a></p>`);
  // A subscriber's link points at the latest message.
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] });
  const fromAdmin = await send(admin, '#**Secret plans>heist**');
  assert.equal(await html(fromAdmin), `<p><a class="stream-topic" data-stream-id="${secret}" href="${bare}/with/${latest}">#Secret plans &gt; heist</a></p>`);
});
