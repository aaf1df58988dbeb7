// The test support's OpenAPI check (test/support/openapi.ts): the overlay loads
// (every entry names a schema that exists and says why), and the check catches
// what it is there to catch, in replies and in events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvent, checkResponse } from '../support/openapi.ts';
import { OVERLAY } from '../support/openapi-overlay.ts';

// The check loads the document on first use: listed event keys are required here.
process.env.CONFAB_OPENAPI_REQUIRED = 'listed';

const ok = { result: 'success', msg: '' };

test('every overlay entry says why in one line', () => {
  for (const entry of OVERLAY) assert.match(entry.reason, /^[^\n]{10,200}$/, JSON.stringify(entry));
});

test('events: a key the document does not allow, a wrong type, an unknown type', () => {
  assert.throws(() => checkEvent({ type: 'restart', id: 1, server_generation: 1, immediate: false }), /immediate/);
  assert.throws(() => checkEvent({ type: 'reaction', op: 'add', id: 1, message_id: 'one' }), /message_id must be integer/);
  assert.throws(() => checkEvent({ type: 'no_such_event', id: 1 }), /no schema for this event type/);
  checkEvent({ type: 'heartbeat', id: 1 });
  // Overlay: newer than the document.
  checkEvent({ type: 'presence', id: 2, presences: { '3': { active_timestamp: 1, idle_timestamp: 2 } } });
});

test('events: a key the event lists is required, unless the document or the overlay says otherwise', () => {
  // The document lists keys without `required`: every listed one is required in an event.
  assert.throws(
    () => checkEvent({ type: 'reaction', op: 'add', id: 1, user_id: 2, emoji_name: 'a', emoji_code: '1f600', reaction_type: 'unicode_emoji' }),
    /message_id/,
  );
  assert.throws(() => checkEvent({ type: 'subscription', op: 'add', id: 1 }), /required property 'subscriptions'/);
  assert.throws(() => checkEvent({ type: 'restart', id: 1, server_generation: 1 }), /svc_feature_level/);
  // Reference names of renamed keys stay optional (COMPAT_NAMES=false leaves them out).
  checkEvent({ type: 'restart', id: 1, server_generation: 1, svc_version: '11.0', svc_feature_level: 419, svc_merge_base: '11.0' });
  // Overlay: keys the reference sends only sometimes.
  checkEvent({ type: 'delete_message', id: 1, message_id: 3, message_type: 'private' });
  checkEvent({ type: 'user_settings', op: 'update', id: 1, property: 'enter_sends', value: true });
});

test('replies: the renames apply, strict objects stay strict, events in GET /events are checked one by one', () => {
  const versions = { svc_version: '11.0', svc_feature_level: 419, svc_merge_base: '11.0' };
  checkResponse('GET', '/api/v1/server_settings', 200, { ...ok, ...versions, zulip_version: '11.0', zulip_feature_level: 419, zulip_merge_base: '11.0' });
  assert.throws(() => checkResponse('GET', '/api/v1/server_settings', 200, { ...ok, ...versions, no_such_key: 1 }), /no_such_key/);
  assert.throws(() => checkResponse('GET', '/api/v1/users/me', 200, { ...ok, user_id: '5' }), /user_id must be integer/);
  const events = (list: unknown[]) => checkResponse('GET', '/api/v1/events', 200, { ...ok, queue_id: 'q', events: list });
  events([{ type: 'heartbeat', id: 1 }]);
  assert.throws(
    () =>
      events([
        { type: 'heartbeat', id: 1 },
        { type: 'restart', id: 2, immediate: true },
      ]),
    /immediate/,
  );
});

test('errors: a listed error keeps its shape, any other has the envelope', () => {
  checkResponse('GET', '/api/v1/messages/5', 400, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  assert.throws(() => checkResponse('GET', '/api/v1/messages/5', 400, { result: 'error', msg: 'Invalid message(s)' }), /code/);
  // A 405 comes before any endpoint, as the reference's: result and msg, without a code.
  checkResponse('PATCH', '/api/v1/users/me', 405, { result: 'error', msg: 'Method Not Allowed', allowed_methods: ['GET'] });
  assert.throws(() => checkResponse('PATCH', '/api/v1/users/me', 405, { result: 'error' }), /405/);
  // Routes the document does not have are not checked.
  checkResponse('GET', '/api/v1/no/such/route', 200, { anything: true });
});
