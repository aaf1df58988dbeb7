// Checks what the server says against the reference OpenAPI document
// (zulip-openapi-10.2.json, converted from ../shared/reference by
// scripts/openapi-to-json.py) with the spec's renames and the overlay applied
// (openapi-overlay.ts: what is newer than the document, or where it is wrong).
// The test Client runs every reply through checkResponse, and every event of a
// GET /events reply through the event's own schema (picked by type and op), so
// an event that is wrong in the same way as the state-applying code still fails.
//
// CONFAB_OPENAPI=off turns the check off; =report appends the mismatches to
// the file CONFAB_OPENAPI_REPORT (JSON lines) instead of failing the test.

import { appendFileSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { OVERLAY, type OverlayEntry } from './openapi-overlay.ts';

type Schema = Record<string, any>;

/**
 * Test files whose mismatches are not sorted yet (real bug, or an overlay entry): the check
 * is off for them until they are. New test files are checked.
 */
const NOT_YET_CHECKED: readonly string[] = [];

const testFile = basename(process.argv[1] ?? '');
const MODE = process.env.CONFAB_OPENAPI ?? (NOT_YET_CHECKED.includes(testFile) ? 'off' : 'strict');

/** The spec's renames of the reference's names (docs/DECISIONS.md, "Compatible names"). */
const RENAMED_PROPERTIES: Record<string, string> = {
  zulip_feature_level: 'svc_feature_level',
  zulip_version: 'svc_version',
  zulip_merge_base: 'svc_merge_base',
  client_gravatar: 'client_svcavatar',
};
const RENAMED_VALUES: Record<string, string> = { zulip_extra_emoji: 'svc_extra_emoji' };

/**
 * Renames in place. A renamed property keeps its reference name beside it, optional:
 * the server sends both (the compatibility names), or only the spec's with COMPAT_NAMES=false.
 */
function applyRenames(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach((x, i) => {
      if (typeof x === 'string' && x in RENAMED_VALUES) node[i] = RENAMED_VALUES[x];
      else applyRenames(x);
    });
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  if (schema.properties && typeof schema.properties === 'object') {
    for (const [from, to] of Object.entries(RENAMED_PROPERTIES)) {
      if (from in schema.properties) schema.properties[to] = schema.properties[from];
    }
  }
  if (Array.isArray(schema.required)) schema.required = schema.required.map((r: string) => RENAMED_PROPERTIES[r] ?? r);
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'required') continue;
    applyRenames(v);
  }
}

const unescapeToken = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
const escapeToken = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The JSON pointer of a response's schema in the document. */
function responsePointer(method: string, path: string, status: string): string {
  return `/paths/${escapeToken(path)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
}

const EVENTS_POINTER = `${responsePointer('GET', '/events', '200')}/allOf/1/properties/events/items/oneOf`;

function at(doc: Schema, pointer: string): any {
  let node: any = doc;
  for (const part of pointer.split('/').slice(1)) {
    node = node?.[unescapeToken(part)];
    if (node === undefined) throw new Error(`openapi overlay: nothing at ${pointer}`);
  }
  return node;
}

/** The enum a property of an event schema is pinned to (`type`, `op`), wherever allOf hides it. */
function pinned(schema: Schema, name: string): string[] | undefined {
  const prop = schema.properties?.[name];
  if (prop?.enum) return prop.enum;
  for (const part of prop?.allOf ?? []) if (part.enum) return part.enum;
  for (const part of schema.allOf ?? []) {
    const found = pinned(part, name);
    if (found) return found;
  }
  return undefined;
}

const eventKey = (type: string, op: string | undefined) => (op === undefined ? type : `${type}/${op}`);

/** Event schemas by `type/op` (or `type`): pointers into the document's events oneOf. */
function indexEvents(doc: Schema): Map<string, string[]> {
  const index = new Map<string, string[]>();
  (at(doc, EVENTS_POINTER) as Schema[]).forEach((schema, i) => {
    for (const type of pinned(schema, 'type') ?? []) {
      for (const op of pinned(schema, 'op') ?? [undefined]) {
        const key = eventKey(type, op);
        index.set(key, [...(index.get(key) ?? []), `${EVENTS_POINTER}/${i}`]);
      }
    }
  });
  return index;
}

/**
 * Where an overlay entry points: `response <METHOD> <path> <status>`, `event <type>[/<op>]`
 * or `schema <Name>`, then optionally `#` and a JSON pointer inside that schema.
 */
function resolve(events: Map<string, string[]>, where: string): string {
  const [root, inner = ''] = where.split('#');
  const words = root.trim().split(/\s+/);
  let base: string;
  if (words[0] === 'response') base = responsePointer(words[1], words[2], words[3]);
  else if (words[0] === 'schema') base = `/components/schemas/${words[1]}`;
  else if (words[0] === 'event') {
    const found = events.get(words[1]);
    if (!found || found.length !== 1) throw new Error(`openapi overlay: event ${words[1]} names ${found?.length ?? 0} schemas`);
    base = found[0];
  } else throw new Error(`openapi overlay: cannot read "${where}"`);
  return base + inner;
}

/**
 * The document rarely says `required`: in an event, every key it lists is required
 * (the events are fixed shapes; the reference's own event checks require them), unless
 * the schema says otherwise or the overlay makes the key `optional`. The reference
 * names of renamed keys stay optional (see applyRenames). Only the event's own level:
 * nested objects (update_dict's `data`) list what may be there.
 */
function requireListed(schema: Schema): void {
  for (const part of [schema, ...(schema.allOf ?? [])] as Schema[]) {
    if (!part.properties || part.required) continue;
    part.required = Object.keys(part.properties).filter((k) => !(k in RENAMED_PROPERTIES));
  }
}

/**
 * Whether listed event keys are required (requireListed): on unless
 * CONFAB_OPENAPI_REQUIRED=schema (only what the document's schemas require). The
 * keys the reference sends only sometimes have overlay entries that say so.
 */
const requireListedKeys = () => (process.env.CONFAB_OPENAPI_REQUIRED ?? 'listed') === 'listed';

function applyOverlay(doc: Schema, events: Map<string, string[]>, entries: readonly OverlayEntry[]): void {
  if (requireListedKeys()) for (const schema of at(doc, EVENTS_POINTER) as Schema[]) requireListed(schema);
  for (const entry of entries) {
    if (!entry.reason) throw new Error(`openapi overlay: ${JSON.stringify(entry)} has no reason`);
    if ('event' in entry) {
      const list = at(doc, EVENTS_POINTER) as Schema[];
      const schema = structuredClone(entry.schema);
      if (requireListedKeys()) requireListed(schema);
      list.push(schema);
      events.set(entry.event, [...(entry.replaces ? [] : (events.get(entry.event) ?? [])), `${EVENTS_POINTER}/${list.length - 1}`]);
      continue;
    }
    if ('response' in entry) {
      const [method, path, status] = entry.response.split(/\s+/);
      const ops = (doc.paths[path] ??= {});
      const op = (ops[method.toLowerCase()] ??= { responses: {} });
      op.responses[status] = { content: { 'application/json': { schema: structuredClone(entry.schema) } } };
      continue;
    }
    for (const where of Array.isArray(entry.at) ? entry.at : [entry.at]) patch(at(doc, resolve(events, where)), entry, where);
  }
}

function patch(target: Schema, entry: Extract<OverlayEntry, { at: unknown }>, where: string): void {
  if (entry.properties) target.properties = { ...target.properties, ...structuredClone(entry.properties) };
  if (entry.optional) target.required = (target.required ?? []).filter((r: string) => !entry.optional!.includes(r));
  if (entry.enum) {
    if (!Array.isArray(target.enum)) throw new Error(`openapi overlay: no enum at ${where}`);
    target.enum.push(...entry.enum);
  }
  for (const [k, v] of Object.entries(entry.merge ?? {})) {
    if (v === undefined) delete target[k];
    else target[k] = structuredClone(v);
  }
}

/**
 * OpenAPI 3.0's `nullable` in JSON Schema's terms, where ajv cannot take it as it is:
 * beside no `type` (a null or the rest), and with an `enum` that does not list null.
 */
function normalizeNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const x of node) normalizeNullable(x);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  for (const [k, v] of Object.entries(schema)) if (k !== 'enum') normalizeNullable(v);
  if (schema.nullable !== true) return;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  if (schema.type === undefined) {
    const rest = { ...schema };
    delete rest.nullable;
    for (const k of Object.keys(schema)) delete schema[k];
    schema.anyOf = [{ type: 'null' }, rest];
  }
}

interface Loaded {
  ajv: Ajv;
  doc: Schema;
  events: Map<string, string[]>;
  routes: { method: string; path: string; pattern: RegExp; literal: number }[];
  compiled: Map<string, ValidateFunction>;
  /** Where each schema object sits in the document, to name it in a mismatch. */
  pointers: WeakMap<object, string>;
}

function pointersOf(node: unknown, pointer = '', into = new WeakMap<object, string>()): WeakMap<object, string> {
  if (!node || typeof node !== 'object') return into;
  into.set(node, pointer);
  for (const [k, v] of Object.entries(node)) pointersOf(v, `${pointer}/${escapeToken(k)}`, into);
  return into;
}

let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded) return loaded;
  const doc = JSON.parse(readFileSync(new URL('./zulip-openapi-10.2.json', import.meta.url), 'utf8')) as Schema;
  applyRenames(doc);
  const events = indexEvents(doc);
  applyOverlay(doc, events, OVERLAY);
  normalizeNullable(doc);
  // OpenAPI 3.0's schema dialect: `nullable` is a keyword; the document's other annotations are not checked.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, verbose: true });
  ajv.addSchema(doc, 'openapi');
  const routes = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Schema>)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const literal = path.split('/').filter((s) => s && !s.startsWith('{')).length;
    for (const method of Object.keys(ops)) routes.push({ method: method.toUpperCase(), path, pattern, literal });
  }
  // A literal segment beats a parameter (`/users/me` before `/users/{user_id}`).
  routes.sort((a, b) => b.literal - a.literal);
  loaded = { ajv, doc, events, routes, compiled: new Map(), pointers: pointersOf(doc) };
  return loaded;
}

function validator(pointer: string): ValidateFunction {
  const l = load();
  let fn = l.compiled.get(pointer);
  if (!fn) {
    fn = l.ajv.compile({ $ref: `openapi#${pointer}` });
    l.compiled.set(pointer, fn);
  }
  return fn;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, MODE === 'report' ? undefined : 8)
    .map((e) => {
      const params = e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : '';
      const schema = e.parentSchema ? load().pointers.get(e.parentSchema) : undefined;
      return `  ${e.instancePath || '/'} ${e.message}${params} (at ${schema ?? e.schemaPath})`;
    })
    .join('\n');
}

function mismatch(where: string, detail: string, value: unknown): void {
  if (MODE === 'report') {
    const file = process.env.CONFAB_OPENAPI_REPORT ?? 'openapi-mismatches.jsonl';
    appendFileSync(file, `${JSON.stringify({ file: testFile, where, detail, value })}\n`);
    return;
  }
  throw new Error(`OpenAPI mismatch: ${where}\n${detail}\n  value: ${JSON.stringify(value).slice(0, 2000)}`);
}

/** Checks one event against the schema its type and op name. */
export function checkEvent(event: Record<string, any>, where = 'event'): void {
  if (MODE === 'off') return;
  const l = load();
  const key = eventKey(event.type, event.op);
  const pointers = l.events.get(key) ?? l.events.get(event.type);
  const label = `${where} ${key}`;
  if (!pointers) {
    mismatch(label, '  no schema for this event type (add one to the overlay)', event);
    return;
  }
  const failures: string[] = [];
  for (const pointer of pointers) {
    const fn = validator(pointer);
    if (fn(event)) return;
    failures.push(describe(fn.errors));
  }
  mismatch(label, failures.join('\n  -- or --\n'), event);
}

/** The codes an error schema names (in enums), to tell a listed error from one the document does not list. */
function namedCodes(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const x of schema) namedCodes(x, into);
  else if (schema && typeof schema === 'object') {
    const s = schema as Schema;
    if (s.$ref) namedCodes(at(load().doc, s.$ref.slice(1)), into);
    if (s.properties?.code?.enum) for (const c of s.properties.code.enum) into.add(c);
    for (const [k, v] of Object.entries(s)) if (k !== '$ref') namedCodes(v, into);
  }
  return into;
}

/** The document's route for a request path, if it has one. */
function route(method: string, url: string): string | undefined {
  const path = url.split('?')[0].replace(/^\/(api\/v1|json)(?=\/)/, '');
  return load().routes.find((r) => r.method === method && r.pattern.test(path))?.path;
}

/** Checks a reply (and, for GET /events, each of its events) against the document. */
export function checkResponse(method: string, url: string, status: number, body: unknown): void {
  if (MODE === 'off' || !body || typeof body !== 'object' || Array.isArray(body)) return;
  const path = route(method, url);
  if (!path) return;
  const l = load();
  const responses = l.doc.paths[path][method.toLowerCase()].responses as Schema;
  const where = `${method} ${path} ${status}`;
  const declared = responses[String(status)]?.content?.['application/json'] ? responsePointer(method, path, String(status)) : undefined;
  if (status === 405) {
    // Answered before any endpoint, as the reference's framework does: result and msg, no code
    // (the fuzz test asks the same of it).
    const b = body as Schema;
    if (b.result !== 'error' || typeof b.msg !== 'string') mismatch(where, 'a 405 has result "error" and a msg', body);
    return;
  }
  if (status >= 400) {
    checkError(where, declared, body as Schema);
    return;
  }
  if (!declared) return;
  const isEvents = method === 'GET' && path === '/events' && status === 200;
  const fn = validator(declared);
  // The events are checked one by one below, each against its own type's schema.
  const envelope = isEvents ? { ...body, events: [] } : body;
  if (!fn(envelope)) mismatch(where, describe(fn.errors), body);
  if (isEvents) for (const event of (body as Schema).events ?? []) checkEvent(event, where);
}

/**
 * An error the document lists for the endpoint (by its code) must match its schema;
 * any other error, the shape every error has.
 */
function checkError(where: string, declared: string | undefined, body: Schema): void {
  if (declared) {
    const fn = validator(declared);
    if (fn(body as unknown)) return;
    if (namedCodes(at(load().doc, declared)).has(String(body.code))) {
      mismatch(where, describe(fn.errors), body);
      return;
    }
  }
  const base = validator('/components/schemas/CodedErrorBase');
  if (!base(body)) mismatch(`${where} (any error)`, describe(base.errors), body);
}
