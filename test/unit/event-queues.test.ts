// What a queue keeps and what a restart writes and reads (issue 12, point 7): a
// queue beyond MAX_QUEUE_EVENTS is dropped (its client re-registers), and saved
// queues write an event that many of them hold once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_QUEUE_EVENTS, capabilities, heartbeatDelay, type QueueOptions } from '../../src/events/queue.ts';
import { QueueRegistry } from '../../src/events/queues.ts';
import { LocalEventBus } from '../../src/events/bus.ts';
import { ApiError } from '../../src/http/errors.ts';

/** Partial events (what the queue mechanics need), loosely typed on purpose. */
const loose = (event: object): any => event;

const options = (userId: number): QueueOptions => ({
  realmId: 1,
  userId,
  eventTypes: null,
  narrow: [],
  allPublicStreams: false,
  applyMarkdown: true,
  clientSvcavatar: false,
  slimPresence: false,
  capabilities: capabilities(),
  clientName: 'test',
  lifespanMs: 600_000,
});

test('a queue beyond its limit is dropped: the next poll is BAD_EVENT_QUEUE_ID', () => {
  const registry = new QueueRegistry();
  const queue = registry.create(options(1));
  for (let i = 0; i < MAX_QUEUE_EVENTS; i++) queue.push(loose({ type: 'typing', op: 'start', n: i }));
  assert.equal(registry.get(queue.id, 1).events.length, MAX_QUEUE_EVENTS, 'up to the limit it keeps everything');
  queue.push(loose({ type: 'typing', op: 'start', n: 'one too many' }));
  assert.equal(queue.events.length, 0, 'nothing kept');
  assert.throws(
    () => registry.get(queue.id, 1),
    (err: unknown) => err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID',
  );
  assert.equal([...registry.forUser(1)].length, 0, 'the queue is gone');
});

test('a parked poll answers when its queue overflows', async () => {
  const registry = new QueueRegistry();
  const queue = registry.create(options(1));
  for (let i = 0; i < MAX_QUEUE_EVENTS; i++) queue.events.push(loose({ type: 'typing', id: queue.nextId++ }));
  const poll = queue.wait(60_000);
  queue.push(loose({ type: 'typing' }));
  assert.deepEqual(await poll, []);
});

test('many restored queues: a shared event is written once, and every queue gets it back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'confab-queues-'));
  try {
    const QUEUES = 5000;
    const registry = new QueueRegistry();
    const message = loose({ type: 'message', message: { id: 7, content: 'x'.repeat(2000), display_recipient: 'general' }, flags: [] });
    for (let i = 0; i < QUEUES; i++) {
      const q = registry.create(options(1 + (i % 50)));
      q.push(message);
      q.push(loose({ type: 'presence', user_id: i }));
    }
    assert.equal(registry.save(dir), QUEUES);
    const size = statSync(join(dir, 'event-queues.json')).size;
    // One copy of the message (~2 kB), its options once, then under 250 bytes a queue; a copy per queue would be 13 MB.
    assert.ok(size < 2_500 + QUEUES * 250, `written ${size} bytes`);

    const restored = new QueueRegistry().load(dir);
    assert.equal(restored.length, QUEUES);
    for (const q of [restored[0]!, restored[QUEUES - 1]!]) {
      assert.equal(q.events.length, 2);
      assert.deepEqual(q.events[0], { ...message, id: 0 });
      assert.equal(q.events[1]!.type, 'presence');
      assert.equal(q.nextId, 2);
    }
    assert.equal(loose(restored[0]!.events[0]!).message, loose(restored[1]!.events[0]!).message, 'one payload shared');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the single-document file of earlier versions still loads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'confab-queues-'));
  try {
    const saved = { id: 'q1', options: options(3), events: [{ type: 'heartbeat', id: 4 }], nextId: 5, newestPrunedId: 3 };
    writeFileSync(join(dir, 'event-queues.json'), JSON.stringify({ savedAt: Date.now(), queues: [saved] }));
    const [queue] = new QueueRegistry().load(dir);
    assert.equal(queue!.id, 'q1');
    assert.deepEqual(queue!.events, saved.events);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an answer's JSON is JSON.stringify's, the newest event's text shared by the queues it was shaped for", () => {
  const registry = new QueueRegistry();
  const [a, b] = [registry.create(options(1)), registry.create(options(2))];
  b.push(loose({ type: 'typing', op: 'start' }));
  const shaped = loose({ type: 'message', message: { id: 7, content: '<p>"quoted" ✓</p>', avatar_url: null, skipped: undefined }, flags: [] });
  for (const q of [a, b]) q.push(shaped);
  for (const q of [a, b]) assert.equal(q.eventsJson(q.events), JSON.stringify(q.events));
  // An event with an `id` of its own keeps it where it was (the queue's id replaces its value).
  const ownId = loose({ id: 'x', type: 'custom' });
  a.push(ownId);
  assert.equal(a.eventsJson(a.events), JSON.stringify(a.events));
  assert.equal(a.eventsJson([]), '[]');
});

test("a woken poll's array: one text per event id, each queue with its own id", () => {
  const registry = new QueueRegistry();
  const [a, b, c] = [registry.create(options(1)), registry.create(options(2)), registry.create(options(3))];
  b.push(loose({ type: 'typing', op: 'start' }));
  b.acknowledge(0);
  const shaped = loose({ type: 'realm_user', op: 'update', person: { user_id: 9, full_name: 'Ünïcode "quoted"' } });
  for (const q of [a, b, c]) q.push(shaped);
  // a and c hold the event as id 0, b as id 1: asked in turns, each gets its own id.
  for (const q of [a, b, c, b, a]) assert.equal(q.eventsJson(q.events), JSON.stringify(q.events));
  // The newest event among older ones, and alone again after them.
  b.push(shaped);
  assert.equal(b.eventsJson(b.events), JSON.stringify(b.events));
  assert.equal(b.eventsJson(b.events.slice(-1)), JSON.stringify(b.events.slice(-1)));
  assert.equal(a.eventsJson(a.events), JSON.stringify(a.events));
});

test('a notice reaches each queue once: users named twice, a public listener among them', () => {
  const registry = new QueueRegistry();
  const bus = new LocalEventBus(registry);
  const listener = registry.create({ ...options(1), allPublicStreams: true });
  const [own, other] = [registry.create(options(2)), registry.create({ ...options(3), allPublicStreams: true })];
  const event = loose({ type: 'typing', op: 'start' });
  bus.deliver({ realmId: 1, event, users: [1, 2, 1], publicChannel: true });
  assert.deepEqual(
    [listener, own, other].map((q) => q.events.length),
    [1, 1, 1],
  );
  bus.deliver({ realmId: 1, event, users: [2, 2] });
  assert.deepEqual(
    [listener, own, other].map((q) => q.events.length),
    [1, 2, 1],
  );
  // Another organization's notice reaches none of them.
  bus.deliver({ realmId: 2, event, users: [1, 2], publicChannel: true });
  assert.deepEqual(
    [listener, own, other].map((q) => q.events.length),
    [1, 2, 1],
  );
});

test("a queue's shape key (its options' part) is made as the registry creates it, not at its first event", () => {
  const registry = new QueueRegistry();
  const [a, b] = [registry.create(options(1)), registry.create({ ...options(2), eventTypes: ['typing', 'message'] })];
  assert.equal(a.optionsShapeKey, JSON.stringify([null, [], true, false, false, capabilities()]));
  assert.equal(b.optionsShapeKey, JSON.stringify([['message', 'typing'], [], true, false, false, capabilities()]));
});

test('heartbeat delays come in steps, within the jitter', () => {
  for (let i = 0; i < 200; i++) {
    const delay = heartbeatDelay(45_000, 10_000);
    assert.ok(delay >= 45_000 && delay <= 55_000 && delay % 100 === 0, String(delay));
  }
  assert.equal(heartbeatDelay(300, 0), 300);
});

test('heartbeats: polls due at one step share a timer, never early; none is left once every poll ended', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const registry = new QueueRegistry();
  const queues = Array.from({ length: 40 }, (_, i) => registry.create(options(i + 1)));
  const answers = new Map<number, { events: unknown[]; at: number }>();
  const started = Date.now();
  const waiters = queues.map((q, i) => q.park(200, (events) => answers.set(i, { events, at: Date.now() })));
  assert.ok(timers() - before <= 2, `one timer per step (at most two steps here), not one per poll: ${timers() - before}`);
  // Half go away, and the other half's heartbeat still comes; a newer poll keeps only its own.
  for (let i = 0; i < 20; i++) queues[i].cancelWait(waiters[i]);
  await new Promise((r) => setTimeout(r, 450));
  assert.deepEqual(
    [...answers.keys()].sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 20),
  );
  for (const { events, at } of answers.values()) {
    assert.deepEqual(events, [{ type: 'heartbeat', id: 0 }]);
    assert.ok(at - started >= 200, 'not before its delay');
  }
  assert.equal(timers(), before, 'no timer left');
  // A poll that ends before its heartbeat takes its step's timer with it.
  queues[0].park(60_000, () => {});
  assert.equal(timers(), before + 1);
  registry.dropAll();
  assert.equal(timers(), before);
});
