// Editing message content, the request's rules, and the edit history
// (digest section 2 "Edit / move message", 1.14 and 3.3; spec endpoint 14).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { FLAG_BITS } from '../../src/messages/flags/flags.ts';
import {
  age,
  channel,
  events,
  everyone,
  expectError,
  fetch,
  flagBits,
  listen,
  rendered,
  row,
  send,
  sendDirect,
  startOrg,
  withPermissions,
  withSettings,
  type Org,
} from './message-edit.fixture.ts';

let o: Org;
let denmark: number;
before(async () => {
  o = await startOrg();
  denmark = await channel(o, [o.admin, o.moderator, o.alice, o.bob, o.guest], {}, 'Denmark');
});
after(() => o.server.close());

const edit = (c: { patch: (...args: never[]) => unknown }, id: number, params: Record<string, unknown>) => (c as any).patch(`/messages/${id}`, params);

test('the sender edits the content: re-rendered, history, last_edit_timestamp, the answer', async () => {
  const id = await send(o.alice, denmark, 'edits', 'first **draft**');
  const before = await fetch(o.alice, id);
  assert.equal(before.edit_history, undefined);
  assert.equal(before.last_edit_timestamp, undefined);
  const res = await edit(o.alice, id, { content: 'second *draft*' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, { result: 'success', msg: '', detached_uploads: [] });
  const after = await fetch(o.alice, id);
  assert.equal(after.content, 'second *draft*');
  assert.equal(await rendered(o.alice, id), '<p>second <em>draft</em></p>');
  assert.equal(typeof after.last_edit_timestamp, 'number');
  assert.equal(after.last_moved_timestamp, undefined, 'a content edit is not a move');
  assert.deepEqual(after.edit_history, [
    {
      user_id: o.alice.id,
      timestamp: after.last_edit_timestamp,
      prev_content: 'first **draft**',
      prev_rendered_content: '<p>first <strong>draft</strong></p>',
    },
  ]);
  assert.equal(after.subject, 'edits');
  // Another edit: most recent first in the message, oldest first as stored.
  await edit(o.alice, id, { content: 'third' });
  const third = await fetch(o.alice, id);
  assert.deepEqual(
    third.edit_history.map((e: any) => e.prev_content),
    ['second *draft*', 'first **draft**'],
  );
  assert.deepEqual(
    (await row(o, id))!.edit_history!.map((e) => e.prev_content),
    ['first **draft**', 'second *draft*'],
  );
  // Content that is only whitespace reads "(deleted)"; search sees the new words.
  await edit(o.alice, id, { content: '   \n ' });
  assert.equal((await fetch(o.alice, id)).content, '(deleted)');
});

test('content edits: only the sender, whatever their role; never others', async () => {
  const roles = everyone(o);
  for (const [role, sender] of Object.entries(roles)) {
    const id = await send(sender, denmark, 'matrix', `by the ${role}`);
    for (const [otherRole, other] of Object.entries(roles)) {
      if (other === sender) continue;
      expectError(await edit(other, id, { content: 'not yours' }), "You don't have permission to edit this message");
      assert.equal((await fetch(sender, id)).content, `by the ${role}`, `${otherRole} changed nothing`);
    }
    const mine = await edit(sender, id, { content: `edited by the ${role}` });
    assert.equal(mine.status, 200, `${role}: ${JSON.stringify(mine.body)}`);
  }
});

test('the time limit, the buffer, and editing turned off', async () => {
  const recent = await send(o.alice, denmark, 'limits', 'recent');
  const old = await send(o.alice, denmark, 'limits', 'old');
  await age(o, [recent], 600 + 15);
  await age(o, [old], 600 + 25);
  assert.equal((await edit(o.alice, recent, { content: 'within the grace' })).status, 200);
  expectError(await edit(o.alice, old, { content: 'too late' }), 'The time limit for editing this message has passed');
  // Owners are held to it too: content belongs to its sender.
  const owners = await send(o.owner, denmark, 'limits', 'owner');
  await age(o, [owners], 700);
  expectError(await edit(o.owner, owners, { content: 'too late' }), 'The time limit for editing this message has passed');
  await withSettings(o, { message_content_edit_limit_seconds: null }, async () => {
    assert.equal((await edit(o.alice, old, { content: 'no limit' })).status, 200);
  });
  await withSettings(o, { allow_message_editing: false }, async () => {
    const fresh = await send(o.alice, denmark, 'limits', 'fresh');
    expectError(await edit(o.alice, fresh, { content: 'x' }), 'Your organization has turned off message editing');
    // Checked before who the sender is (the reference's order).
    expectError(await edit(o.bob, fresh, { content: 'x' }), 'Your organization has turned off message editing');
  });
});

test('the request: nothing to change, direct messages, propagate_mode, resolving general chat, bad topics, content with a channel', async () => {
  const id = await send(o.alice, denmark, 'shape', 'content');
  expectError(await edit(o.alice, id, {}), 'Nothing to change');
  expectError(await edit(o.alice, id, { topic: 'shape' }), 'Nothing to change');
  expectError(await edit(o.alice, id, { topic: '  shape ' }), 'Nothing to change');
  expectError(await edit(o.alice, id, { stream_id: denmark }), 'Nothing to change');
  expectError(await edit(o.alice, id, { content: 'x', propagate_mode: 'change_all' }), 'Invalid propagate_mode without topic edit');
  expectError(await edit(o.alice, id, { topic: 'x', propagate_mode: 'change_some' }), 'Invalid propagate_mode');
  expectError(await edit(o.alice, id, { topic: '✔ ' }), 'General chat cannot be marked as resolved');
  expectError(await edit(o.alice, id, { topic: '✔ general chat' }), 'General chat cannot be marked as resolved');
  expectError(await edit(o.alice, id, { topic: 'bad\u0000topic' }), 'Invalid character in topic, at position 4!');
  const other = await channel(o, [o.alice]);
  expectError(await edit(o.alice, id, { stream_id: other, content: 'x' }), 'Cannot change message content while changing channel');
  expectError(await edit(o.alice, id, { stream_id: -1 }), 'stream_id is too small');
  expectError(await edit(o.alice, id, { stream_id: '"5"' }), 'stream_id is not an integer');
  const both = await edit(o.alice, id, { topic: 'a', subject: 'b' });
  assert.equal(both.body.code, 'REQUEST_CONFUSING_VAR');
  const dm = await sendDirect(o.alice, [o.bob], 'direct words');
  expectError(await edit(o.alice, dm, { stream_id: denmark }), 'Direct messages cannot be moved to channels.');
  expectError(await edit(o.alice, dm, { topic: 'a topic' }), 'Direct messages cannot have topics.');
  expectError(await edit(o.alice, 999_999, { content: 'x' }), 'Invalid message(s)');
  // A direct message the caller did not receive does not exist for them.
  expectError(await edit(o.carol, dm, { content: 'x' }), 'Invalid message(s)');
  // `subject` is the old name of `topic`.
  assert.equal((await edit(o.alice, id, { subject: 'renamed' })).status, 200);
  assert.equal((await fetch(o.alice, id)).subject, 'renamed');
  // Nothing was changed by the refusals.
  const m = await fetch(o.alice, id);
  assert.equal(m.content, 'content');
  assert.equal(m.edit_history.length, 1);
  assert.equal((await fetch(o.alice, dm)).content, 'direct words');
});

test('prev_content_sha256: the edit applies only to the content the client saw', async () => {
  const id = await send(o.alice, denmark, 'races', 'version one');
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const stale = await edit(o.alice, id, { content: 'from a stale client', prev_content_sha256: hash('version zero') });
  assert.equal(stale.status, 400);
  assert.deepEqual(stale.body, {
    result: 'error',
    msg: "'prev_content_sha256' value does not match the expected value.",
    code: 'EXPECTATION_MISMATCH',
  });
  assert.equal((await fetch(o.alice, id)).content, 'version one');
  assert.equal((await edit(o.alice, id, { content: 'version two', prev_content_sha256: hash('version one') })).status, 200);
  assert.equal((await fetch(o.alice, id)).content, 'version two');
});

test('mentions: added ones flag the users, removed ones clear the flags; wildcards need permission in big channels', async () => {
  const id = await send(o.alice, denmark, 'mentions', 'hello @**Bob Baker**');
  assert.equal((await flagBits(o, o.bob, id))! & FLAG_BITS.mentioned, FLAG_BITS.mentioned);
  // Bob starred it; the edit keeps what is his.
  await o.bob.post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'starred' });
  await edit(o.alice, id, { content: 'hello @**Mo Derator**' });
  const bobFlags = (await flagBits(o, o.bob, id))!;
  assert.equal(bobFlags & FLAG_BITS.mentioned, 0, 'the removed mention is cleared');
  assert.equal((await flagBits(o, o.moderator, id))! & FLAG_BITS.mentioned, FLAG_BITS.mentioned);
  await edit(o.alice, id, { content: 'hello @**all**' });
  for (const c of [o.bob, o.moderator, o.admin]) {
    const bits = (await flagBits(o, c, id))!;
    assert.equal(bits & FLAG_BITS.stream_wildcard_mentioned, FLAG_BITS.stream_wildcard_mentioned);
    assert.equal(bits & FLAG_BITS.mentioned, 0);
  }
  const flags = (await fetch(o.bob, id)).flags;
  assert.ok(flags.includes('stream_wildcard_mentioned') && flags.includes('wildcard_mentioned'));
  // A channel over the wildcard threshold: members may not mention everyone there.
  const crowd = [];
  for (let i = 0; i < 15; i++) crowd.push(await o.server.createUser({ fullName: `Crowd ${i}` }));
  const big = await channel(o, [o.alice, ...crowd]);
  const quiet = await send(o.alice, big, 'crowd', 'quiet');
  await withPermissions(o, { can_mention_many_users_group: 'role:administrators' }, async () => {
    expectError(
      await edit(o.alice, quiet, { content: 'hey @**all**' }),
      'You do not have permission to use channel wildcard mentions in this channel.',
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    );
    assert.equal((await fetch(o.alice, quiet)).content, 'quiet');
  });
});

test('update_message for a content edit: the fields, to everyone with a copy, each with their flags', async () => {
  const id = await send(o.alice, denmark, 'events', 'before @**Bob Baker**');
  await o.alice.post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'starred' });
  const queues = {
    alice: await listen(o.alice),
    bob: await listen(o.bob),
    carol: await listen(o.carol),
    carolAll: await listen(o.carol, { all_public_streams: true }),
  };
  await edit(o.alice, id, { content: 'after' });
  const [event] = await events(queues.bob);
  const m = await fetch(o.alice, id);
  assert.deepEqual(event, {
    type: 'update_message',
    user_id: o.alice.id,
    edit_timestamp: m.last_edit_timestamp,
    message_id: id,
    message_ids: [id],
    rendering_only: false,
    flags: [],
    orig_content: 'before @**Bob Baker**',
    orig_rendered_content: (await row(o, id))!.edit_history![0].prev_rendered_content,
    content: 'after',
    rendered_content: '<p>after</p>',
    is_me_message: false,
    stream_name: 'Denmark',
    stream_id: denmark,
  });
  const [alices] = await events(queues.alice);
  assert.ok(m.flags.includes('starred'));
  assert.deepEqual(alices.flags, m.flags, "the sender's own flags");
  assert.deepEqual(await events(queues.carol), [], 'no copy, not subscribed');
  assert.equal((await events(queues.carolAll)).length, 1, 'follows all public channels');
  // A direct message: its participants only.
  const dm = await sendDirect(o.alice, [o.bob], 'psst');
  await edit(o.alice, dm, { content: '/me whispers' });
  const [dmEvent] = await events(queues.bob);
  assert.equal(dmEvent.is_me_message, true);
  assert.equal(dmEvent.stream_id, undefined);
  assert.equal(dmEvent.propagate_mode, undefined);
  assert.deepEqual(await events(queues.carolAll), []);
});

test('a refused edit changes nothing and tells no one', async () => {
  const id = await send(o.alice, denmark, 'refused', 'original');
  const q = await listen(o.alice);
  const before = await row(o, id);
  expectError(await edit(o.bob, id, { content: 'hijack', topic: 'elsewhere' }), "You don't have permission to edit this message");
  await withPermissions(o, { can_mention_many_users_group: 'role:nobody' }, async () => {
    // Fails late (after rendering): still nothing written.
    const crowd = [];
    for (let i = 0; i < 16; i++) crowd.push(await o.server.createUser({ fullName: `Many ${i}` }));
    const big = await channel(o, [o.alice, ...crowd]);
    const there = await send(o.alice, big, 'refused', 'there');
    const res = await edit(o.alice, there, { content: '@**all** and a new topic', topic: 'renamed' });
    assert.equal(res.body.code, 'STREAM_WILDCARD_MENTION_NOT_ALLOWED');
    const after = await fetch(o.alice, there);
    assert.equal(after.subject, 'refused');
    assert.equal(after.edit_history, undefined);
  });
  assert.deepEqual(await row(o, id), before);
  assert.deepEqual(await events(q, 'update_message'), []);
});

test('GET /messages/{id}/history: snapshots oldest first, with an HTML diff of each content edit', async () => {
  const id = await send(o.alice, denmark, 'party at my houz', 'Hello!');
  await edit(o.alice, id, { content: 'Howdy!' });
  await edit(o.bob, id, { topic: 'party at my house' });
  const res = await o.bob.get(`/messages/${id}/history`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [original, contentEdit, topicEdit] = res.body.message_history;
  assert.equal(res.body.message_history.length, 3);
  const sent = await fetch(o.alice, id);
  assert.deepEqual(original, {
    topic: 'party at my houz',
    content: 'Hello!',
    rendered_content: '<p>Hello!</p>',
    timestamp: sent.timestamp,
    user_id: o.alice.id,
  });
  assert.deepEqual(contentEdit, {
    topic: 'party at my houz',
    content: 'Howdy!',
    rendered_content: '<p>Howdy!</p>',
    timestamp: sent.last_edit_timestamp,
    user_id: o.alice.id,
    prev_content: 'Hello!',
    prev_rendered_content: '<p>Hello!</p>',
    content_html_diff: '<div><p><span class="highlight_text_deleted">Hello!</span><span class="highlight_text_inserted">Howdy!</span></p></div>',
  });
  assert.deepEqual(topicEdit, {
    topic: 'party at my house',
    content: 'Howdy!',
    rendered_content: '<p>Howdy!</p>',
    timestamp: sent.last_moved_timestamp,
    user_id: o.bob.id,
    prev_topic: 'party at my houz',
  });
  // Public history: readable without a copy.
  assert.equal((await o.carol.get(`/messages/${id}/history`)).body.message_history.length, 3);
  // A message never edited has its original snapshot only.
  const plain = await send(o.alice, denmark, '', 'untouched');
  const single = await o.alice.get(`/messages/${plain}/history`);
  assert.deepEqual(
    single.body.message_history.map((s: any) => s.topic),
    ['general chat'],
  );
  const raw = await o.alice.get(`/messages/${plain}/history`, { allow_empty_topic_name: true });
  assert.deepEqual(
    raw.body.message_history.map((s: any) => s.topic),
    [''],
  );
  expectError(await o.alice.get('/messages/999999/history'), 'Invalid message(s)');
  const dm = await sendDirect(o.alice, [o.bob], 'secret');
  expectError(await o.carol.get(`/messages/${dm}/history`), 'Invalid message(s)');
});

test('content_html_diff marks added and removed words and keeps the new markup', async () => {
  const id = await send(o.alice, denmark, 'diff', 'one two three');
  await edit(o.alice, id, { content: 'one three four\n\n* a list' });
  const [, snapshot] = (await o.alice.get(`/messages/${id}/history`)).body.message_history;
  assert.equal(
    snapshot.content_html_diff,
    '<div><p>one <span class="highlight_text_deleted">two</span> three <span class="highlight_text_inserted">four</span></p>\n' +
      '<ul>\n<li><span class="highlight_text_inserted">a list</span></li>\n</ul></div>',
  );
});

test('edit history visibility: none, moves only, all', async () => {
  const id = await send(o.alice, denmark, 'visibility', 'secret first words');
  await edit(o.alice, id, { content: 'public words' });
  await edit(o.alice, id, { topic: 'visible move' });
  await withSettings(o, { message_edit_history_visibility_policy: 'none' }, async () => {
    expectError(await o.bob.get(`/messages/${id}/history`), 'Message edit history is disabled in this organization');
    // Checked before the message: no hint whether it exists.
    expectError(await o.bob.get('/messages/999999/history'), 'Message edit history is disabled in this organization');
    const m = await fetch(o.bob, id);
    assert.equal(m.edit_history, undefined);
    assert.equal(typeof m.last_edit_timestamp, 'number');
  });
  await withSettings(o, { message_edit_history_visibility_policy: 'moves' }, async () => {
    const history = (await o.bob.get(`/messages/${id}/history`)).body.message_history;
    assert.deepEqual(
      history.map((s: any) => s.topic),
      ['visibility', 'visible move'],
    );
    for (const s of history) {
      assert.equal(s.content, 'public words', 'no earlier content shows');
      assert.equal(s.prev_content, undefined);
      assert.equal(s.content_html_diff, undefined);
    }
    const m = await fetch(o.bob, id);
    assert.deepEqual(
      m.edit_history.map((e: any) => Object.keys(e).sort()),
      [['prev_topic', 'timestamp', 'topic', 'user_id']],
    );
  });
});

test('register stays in sync with content edits', async () => {
  const viewer = await registerViewer(o.server, o.bob);
  const id = await send(o.alice, denmark, 'sync', 'hello @**Bob Baker**');
  await edit(o.alice, id, { content: 'bye' });
  await expectStateInSync(o.server, viewer, 'after a content edit');
});
