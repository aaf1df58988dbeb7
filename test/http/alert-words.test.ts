// Alert words (issue 11 point 5; OpenAPI get/add/remove-alert-words, the
// `alert_words` event and register key) and the has_alert_word flag on send and edit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { alertableText, containsAlertWord } from '../../src/alert_words/matching.ts';

let server: TestServer;
let alice: Client;
let bob: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [alice.id, bob.id] }));
});
after(() => server.close());

const words = async (c: Client) => ok(await c.get('/users/me/alert_words')).alert_words;
const send = async (from: Client, content: string) => ok(await from.post('/messages', { type: 'stream', to: 'Denmark', topic: 'alerts', content })).id;
const flagsOf = async (c: Client, id: number) => ok(await c.get(`/messages/${id}`)).message.flags as string[];

test('add, list and remove: stripped, case-insensitive, the whole list in the reply, the event and register', async () => {
  const viewer = await registerViewer(server, bob);
  const queue = ok(await bob.post('/register', { event_types: ['alert_words'] })).queue_id;
  const added = ok(await bob.post('/users/me/alert_words', { alert_words: ['  Coffee ', 'tea', '', '   ', 'TEA', 'big deal'] }));
  assert.deepEqual(added.alert_words, ['Coffee', 'TEA', 'big deal'], 'one per word regardless of case; blanks dropped');
  assert.deepEqual(ok(await bob.post('/users/me/alert_words', { alert_words: ['coffee', 'Cake'] })).alert_words, ['Coffee', 'TEA', 'big deal', 'Cake']);
  assert.deepEqual(await words(bob), ['Coffee', 'TEA', 'big deal', 'Cake']);
  await expectStateInSync(server, viewer, 'after adding');
  assert.deepEqual(ok(await bob.delete('/users/me/alert_words', { alert_words: ['CAKE', 'tea', 'unknown'] })).alert_words, ['Coffee', 'big deal']);
  await expectStateInSync(server, viewer, 'after removing');
  const evs = ok(await bob.get('/events', { queue_id: queue, last_event_id: -1, dont_block: true })).events.filter((e: any) => e.type === 'alert_words');
  assert.deepEqual(
    evs.map((e: any) => e.alert_words),
    [
      ['Coffee', 'TEA', 'big deal'],
      ['Coffee', 'TEA', 'big deal', 'Cake'],
      ['Coffee', 'big deal'],
    ],
  );
  assert.deepEqual(await words(alice), [], "lists are each user's own");
  const outsider = await server.createOrganization('elsewhere');
  assert.deepEqual(ok(await outsider.get('/users/me/alert_words')).alert_words, []);
});

test('bad input: too long, not a list, missing; nothing changes', async () => {
  const before = await words(bob);
  const long = await bob.post('/users/me/alert_words', { alert_words: ['ok', 'x'.repeat(101)] });
  assert.deepEqual(long.body, { result: 'error', msg: 'alert_words[1] is too long (limit: 100 characters)', code: 'BAD_REQUEST' });
  const notList = await bob.post('/users/me/alert_words', { alert_words: 'coffee' });
  assert.equal(notList.status, 400);
  const missing = await bob.post('/users/me/alert_words', {});
  assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  assert.deepEqual(await words(bob), before);
});

test('has_alert_word: set for recipients whose word appears with word boundaries, not in code blocks, recomputed on edit', async () => {
  ok(await alice.post('/users/me/alert_words', { alert_words: ['deploy'] }));
  const viewer = await registerViewer(server, bob);
  const hit = await send(alice, 'The big DEAL is here, (coffee)!');
  assert.ok((await flagsOf(bob, hit)).includes('has_alert_word'), 'case-insensitive, phrases, punctuation around');
  assert.ok(!(await flagsOf(alice, hit)).includes('has_alert_word'), 'only those whose word it is');
  const inside = await send(alice, 'coffeemaker and bigdeal');
  assert.ok(!(await flagsOf(bob, inside)).includes('has_alert_word'), 'not inside another word');
  const code = await send(alice, '```\ncoffee\n```');
  assert.ok(!(await flagsOf(bob, code)).includes('has_alert_word'), 'not in a code block');
  const own = await send(alice, 'time to deploy.');
  assert.ok((await flagsOf(alice, own)).includes('has_alert_word'), "the sender's own words count too");
  await expectStateInSync(server, viewer, 'after messages with alert words');

  ok(await alice.patch(`/messages/${inside}`, { content: 'now just coffee' }));
  assert.ok((await flagsOf(bob, inside)).includes('has_alert_word'), 'an edit that adds a word sets the flag');
  ok(await alice.patch(`/messages/${hit}`, { content: 'nothing to see' }));
  assert.ok(!(await flagsOf(bob, hit)).includes('has_alert_word'), 'an edit that removes it clears the flag');
  await expectStateInSync(server, viewer, 'after edits');
  const dm = ok(await alice.post('/messages', { type: 'direct', to: [bob.id], content: 'coffee?' })).id;
  assert.ok((await flagsOf(bob, dm)).includes('has_alert_word'), 'direct messages too');
});

test("the matcher follows the reference's boundaries", () => {
  const has = (content: string, word: string) => containsAlertWord(alertableText(content), word);
  assert.ok(has('coffee', 'coffee'));
  assert.ok(has('"coffee"', 'coffee') === false, "a double quote is not allowed after a word (the reference lists '\",')");
  assert.ok(has('> coffee', 'coffee'));
  assert.ok(has('*coffee*', 'coffee'));
  assert.ok(has('`coffee`', 'coffee'));
  assert.ok(has('[coffee]', 'coffee'));
  assert.ok(has('xcoffee', 'coffee'), 'the reference accepts any character at position 0');
  assert.ok(!has('axcoffee', 'coffee'));
  assert.ok(!has('coffees', 'coffee'));
  assert.ok(has('coffees and coffee', 'coffee'), 'a later occurrence counts');
  assert.ok(!has('~~~\ncoffee\n~~~', 'coffee'));
  assert.ok(has('```quote\ncoffee\n```', 'coffee'), 'quote blocks are text');
});
