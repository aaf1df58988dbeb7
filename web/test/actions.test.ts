import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Actions } from '../src/actions.ts';
import { Store } from '../src/state.ts';
import { msg as message } from './fixtures.ts';

const msg = (id: number) => message(id, { flags: ['read'] });

/** A server answering GET /json/messages from `pages`, in turn; the requests' parameters are kept. */
function fakeServer(pages: { messages: number[]; found_newest: boolean }[]) {
  const asked: URLSearchParams[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (url: string) => {
    const params = new URL(url, 'http://x').searchParams;
    asked.push(params);
    const page = pages.shift() ?? { messages: [], found_newest: true };
    const body = { result: 'success', msg: '', messages: page.messages.map(msg), found_oldest: true, found_newest: page.found_newest };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
  });
  return asked;
}

function registered(maxMessageId: number): Store {
  const store = new Store();
  store.load({
    queue_id: 'q',
    last_event_id: -1,
    user_id: 1,
    realm_users: [{ user_id: 1, email: 'me@x', full_name: 'Me', role: 400 }],
    max_message_id: maxMessageId,
  });
  return store;
}

test('the first page asked for during /register is used once, not asked again', async () => {
  const asked = fakeServer([{ messages: [10, 11], found_newest: true }]);
  const actions = new Actions(registered(11));
  actions.prefetch([]);
  await actions.openNarrow([]);
  assert.deepEqual(actions.store.list.ids, [10, 11]);
  assert.equal(asked.length, 1);
  // A later view is fetched afresh.
  await actions.openNarrow([]);
  assert.equal(asked.length, 2);
});

test('messages sent between the prefetched page and the queue are fetched after it', async () => {
  const asked = fakeServer([
    { messages: [10, 11], found_newest: true },
    { messages: [12], found_newest: true },
  ]);
  const actions = new Actions(registered(12));
  actions.prefetch([]);
  await actions.openNarrow([]);
  assert.deepEqual(actions.store.list.ids, [10, 11, 12]);
  assert.equal(asked[1]!.get('anchor'), '11');
  assert.equal(asked[1]!.get('include_anchor'), 'false');
  assert.equal(actions.store.list.foundNewest, true);
});

test('a prefetched page of another view is not used', async () => {
  const asked = fakeServer([
    { messages: [10], found_newest: true },
    { messages: [20, 21], found_newest: true },
  ]);
  const actions = new Actions(registered(21));
  actions.prefetch([{ operator: 'channel', operand: '6' }]);
  await actions.openNarrow([]);
  assert.deepEqual(actions.store.list.ids, [20, 21]);
  assert.equal(asked.length, 2);
});
