// The one request-parameter parser every route uses (spec "What the service does",
// digest section 0). A route declares its parameters; the dispatcher reads each one
// from the body, then the query string, decodes it and validates it, and reports
// the keys nobody consumed as `ignored_parameters_unsupported`.
//
// Two encodings exist, as in Zulip: plain strings are taken raw, and every other
// type (booleans, integers, lists, objects, null) is JSON text parsed strictly:
// `true`, not `True` or `1`; `5`, not `"5"`.

import { z } from 'zod';
import { ApiError, badRequest, missingArgument } from './errors.ts';

export interface ParamSource {
  /** The raw value of a key (body first, then query string), or undefined. */
  get(name: string): string | undefined;
  keys(): Iterable<string>;
}

type Parser<T> = (raw: string, name: string) => T;

export class Param<T, Opt extends boolean = false> {
  readonly parse: Parser<T>;
  readonly isOptional: boolean;
  readonly defaultValue: T | undefined;
  readonly hasDefault: boolean;
  readonly aliases: readonly string[];
  /** Parameters only reachable under one name whose absence is not an error. */
  declare readonly _opt: Opt;

  constructor(parse: Parser<T>, opts: { optional?: boolean; defaultValue?: T; hasDefault?: boolean; aliases?: string[] } = {}) {
    this.parse = parse;
    this.isOptional = opts.optional ?? false;
    this.defaultValue = opts.defaultValue;
    this.hasDefault = opts.hasDefault ?? false;
    this.aliases = opts.aliases ?? [];
  }

  optional(): Param<T, true> {
    return new Param<T, true>(this.parse, { optional: true, aliases: [...this.aliases] });
  }

  /** Absent means `value`; the parameter is then never undefined. */
  default(value: T): Param<T, false> {
    return new Param<T, false>(this.parse, { optional: true, defaultValue: value, hasDefault: true, aliases: [...this.aliases] });
  }

  /** Another accepted name (e.g. the deprecated `subject` for `topic`). Both at once is an error. */
  alias(name: string): Param<T, Opt> {
    return new Param<T, Opt>(this.parse, {
      optional: this.isOptional,
      defaultValue: this.defaultValue,
      hasDefault: this.hasDefault,
      aliases: [...this.aliases, name],
    });
  }

  /** Further validation or conversion of the decoded value. */
  map<U>(fn: (value: T, name: string) => U): Param<U, Opt> {
    const parse = this.parse;
    return new Param<U, Opt>((raw, name) => fn(parse(raw, name), name), {
      optional: this.isOptional,
      aliases: [...this.aliases],
    });
  }
}

export type ParamSpecs = Record<string, Param<any, boolean>>;

export type ParamValues<S extends ParamSpecs> = {
  [K in keyof S]: S[K] extends Param<infer T, infer Opt> ? (Opt extends true ? T | undefined : T) : never;
};

/** `narrow[0]["operand"]`: the path form Zulip's messages use. */
function describePath(name: string, path: readonly PropertyKey[]): string {
  return name + path.map((p) => (typeof p === 'number' ? `[${p}]` : `[${JSON.stringify(String(p))}]`)).join('');
}

const TYPE_NAMES: Record<string, string> = {
  number: 'an integer',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'a list',
  object: 'a dict',
  record: 'a dict',
  string: 'a string',
  null: 'null',
};

/** Turns the first zod issue into Zulip's typed BAD_REQUEST message. */
export function zodIssueMessage(name: string, issue: z.core.$ZodIssue): string {
  const where = describePath(name, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined && issue.path.length > 0) return `${where} field is missing`;
      return `${where} is not ${TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`}`;
    case 'too_big':
      if (issue.origin === 'string') return `${where} is too long (limit: ${issue.maximum} characters)`;
      if (issue.origin === 'array') return `${where} is too long (limit: ${issue.maximum} items)`;
      return `${where} is too large`;
    case 'too_small':
      if (issue.origin === 'string') return issue.minimum === 1 ? `${where} cannot be blank` : `${where} is too short`;
      if (issue.origin === 'array') return `${where} is too short`;
      return `${where} is too small`;
    case 'invalid_value':
      return `Invalid ${where}`;
    case 'invalid_format':
      return `${where} has invalid format`;
    case 'invalid_union': {
      // Report the most specific branch failure when every branch failed on a nested value.
      const nested = issue.errors.flat().find((i) => i.path.length > 0);
      return nested ? zodIssueMessage(name, { ...nested, path: [...issue.path, ...nested.path] }) : `${where} is not valid`;
    }
    case 'unrecognized_keys':
      return `${where} has unexpected keys: ${issue.keys.join(', ')}`;
    case 'custom':
      return issue.message.replaceAll('{name}', where);
    default:
      return `Invalid ${where}`;
  }
}

/** Validates an already-decoded value against a zod schema, throwing Zulip-style errors. */
export function validate<T>(schema: z.ZodType<T>, value: unknown, name: string): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw badRequest(zodIssueMessage(name, result.error.issues[0]));
}

/** Deeper JSON than any parameter needs; validating deeper values would exhaust the stack. */
export const MAX_JSON_DEPTH = 64;

/** How deeply arrays and objects nest in JSON text, counted without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123 /* [ { */) deepest = Math.max(deepest, ++depth);
    else if (c === 93 || c === 125 /* ] } */) depth--;
  }
  return deepest;
}

/** JSON text, refused when nested deeper than MAX_JSON_DEPTH. */
export function parseJsonText(raw: string, what: string): unknown {
  if (jsonDepth(raw) > MAX_JSON_DEPTH) throw badRequest(`${what} is nested too deeply (limit: ${MAX_JSON_DEPTH} levels)`);
  return JSON.parse(raw);
}

/**
 * What JSON text can start with, after its whitespace: a bare word cannot be JSON unless it is
 * exactly `true`, `false` or `null`.
 */
const MAYBE_JSON = /^[ \t\n\r]*(?:[[{"\-0-9]|(?:true|false|null)[ \t\n\r]*$)/;

/**
 * `raw`'s JSON value, or `raw` itself when it is not JSON (the lenient parameters that take
 * a bare word too). A bare word is told apart without a parse: a thrown error costs a few
 * microseconds (more under a deep stack), and `to: "general"` is the common form.
 */
export function jsonOrText(raw: string): unknown {
  if (!MAYBE_JSON.test(raw)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function parseJson(raw: string, name: string): unknown {
  try {
    return parseJsonText(raw, name);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badRequest(`${name} is not valid JSON`);
  }
}

const INTEGER_TEXT = /^\s*-?\d+\s*$/;
/** JSON integer text of at most 15 digits (always a safe integer), without spaces. */
export const PLAIN_INTEGER = /^-?(0|[1-9]\d{0,14})$/;

/** The parameter constructors. */
export const p = {
  /** A raw string, optionally checked by a zod string schema (lengths, patterns). */
  str(schema?: z.ZodType<string>): Param<string> {
    return new Param((raw, name) => (schema ? validate(schema, raw, name) : raw));
  },

  /** A raw string that must be one of `values`, else "Invalid <name>". */
  choice<const V extends readonly string[]>(values: V): Param<V[number]> {
    return new Param((raw, name) => {
      if (!(values as readonly string[]).includes(raw)) throw badRequest(`Invalid ${name}`);
      return raw as V[number];
    });
  },

  /** JSON text validated by a zod schema. */
  json<T>(schema: z.ZodType<T>): Param<T> {
    return new Param((raw, name) => validate(schema, parseJson(raw, name), name));
  },

  /** A JSON integer; `1.5` and `"5"` are not integers. */
  int(schema?: z.ZodType<number>): Param<number> {
    const checked = schema ?? z.int();
    return new Param((raw, name) => {
      // Plain digits (most values) are a safe integer: no JSON parse, and no schema when none was given.
      if (PLAIN_INTEGER.test(raw)) return schema ? validate(schema, Number(raw), name) : Number(raw);
      const value = parseJson(raw, name);
      if (typeof value !== 'number' || !INTEGER_TEXT.test(raw)) throw badRequest(`${name} is not an integer`);
      return validate(checked, value, name);
    });
  },

  bool(): Param<boolean> {
    const parse = p.json(z.boolean()).parse;
    // `true` and `false` as sent: the JSON parse and the schema would say the same.
    return new Param((raw, name) => (raw === 'true' ? true : raw === 'false' ? false : parse(raw, name)));
  },

  intList(): Param<number[]> {
    return p.json(z.array(z.int()));
  },

  /** A JSON boolean, or one word besides (bare or JSON-quoted): `include_subscribers=partial`. */
  boolOr<const W extends string>(word: W): Param<boolean | W> {
    return new Param((raw, name) => {
      const text = raw.trim();
      if (text === word || text === JSON.stringify(word)) return word;
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw badRequest(`Invalid ${name}`);
    });
  },
};

export interface ParsedParams<S extends ParamSpecs> {
  values: ParamValues<S>;
  consumed: Set<string>;
}

/**
 * The reference's names for our renamed parameters (docs/DECISIONS.md, "Compatible
 * names"): read where the spec's name is absent; when both are given the spec's wins.
 */
export const COMPAT_PARAM_NAMES: Readonly<Record<string, string>> = { client_svcavatar: 'client_gravatar' };

export function parseParams<S extends ParamSpecs>(specs: S, source: ParamSource, compatNames: Readonly<Record<string, string>> = {}): ParsedParams<S> {
  const values: Record<string, unknown> = {};
  const consumed = new Set<string>();
  for (const name in specs) {
    const spec = specs[name];
    const compat = compatNames[name];
    if (spec.aliases.length === 0 && compat === undefined) {
      // One name (nearly every parameter): no lists made.
      const raw = source.get(name);
      if (raw !== undefined) {
        consumed.add(name);
        values[name] = spec.parse(raw, name);
      } else if (!spec.isOptional) throw missingArgument(name);
      else values[name] = spec.hasDefault ? spec.defaultValue : undefined;
      continue;
    }
    const names = [name, ...spec.aliases];
    const given = names.filter((n) => source.get(n) !== undefined);
    if (compat !== undefined && source.get(compat) !== undefined) {
      consumed.add(compat);
      if (given.length === 0) given.push(compat);
    }
    for (const n of given) consumed.add(n);
    if (given.length > 1) {
      throw new ApiError('REQUEST_CONFUSING_VAR', `Can't decide between '${given[0]}' and '${given[1]}' arguments`, {
        data: { var_name1: given[0], var_name2: given[1] },
      });
    }
    if (given.length === 0) {
      if (!spec.isOptional) throw missingArgument(name);
      values[name] = spec.hasDefault ? spec.defaultValue : undefined;
      continue;
    }
    values[name] = spec.parse(source.get(given[0]) as string, given[0]);
  }
  return { values: values as ParamValues<S>, consumed };
}

/** Sorted keys of the request that no declared parameter consumed. */
export function ignoredParameters(source: ParamSource, consumed: Set<string>): string[] {
  let ignored: Set<string> | undefined;
  for (const k of source.keys()) if (!consumed.has(k)) (ignored ??= new Set()).add(k);
  return ignored ? [...ignored].sort() : [];
}

/** "Unsupported parameter combination: a, b", with the `parameters` field Zulip adds. */
export function unsupportedCombination(names: string[]): ApiError {
  const joined = names.join(', ');
  return badRequest(`Unsupported parameter combination: ${joined}`, { parameters: joined });
}
