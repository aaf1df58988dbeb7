// A linkifier is checked the way the reference server checks it (a Django
// model's full_clean): field errors first, then the pattern and the template
// together, reported as `{"errors": {"pattern": [...], "url_template": [...],
// "__all__": [...]}}` with the first message as `msg`. Patterns compile with
// the renderer's engine (RE2), so what validates also renders.

import { RE2JS } from 're2js';
import { ApiError } from '../http/errors.ts';

/** Django's key for errors that belong to no single field. */
export const NON_FIELD_ERRORS = '__all__';

export type ValidationErrors = Record<string, string[]>;

const BLANK = 'This field cannot be blank.';

// Bounds that keep a linkifier within one index row and a reasonable regular expression.
export const MAX_PATTERN_LENGTH = 1000;
export const MAX_TEMPLATE_LENGTH = 1024;
const tooLong = (limit: number, value: string) => `Ensure this value has at most ${limit} characters (it has ${value.length}).`;

// Links a browser would run or fetch from elsewhere: script and data schemes, and
// scheme-relative //host (also written with backslashes). Browsers ignore leading
// spaces and controls, and tabs and newlines anywhere, so the check does too.
const UNSAFE_LINK = /^(?:(?:javascript|data|vbscript):|[\\/]{2})/i;
export const UNSAFE_TEMPLATE = 'Unsafe URL template: javascript:, data:, vbscript: and //host links are not allowed.';

function isUnsafeLink(template: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers strip leading control characters from a URL, so must we
  return UNSAFE_LINK.test(template.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+/, ''));
}

// re2js speaks Go's regexp/syntax; clients and people know the C++ RE2 wording.
const RE2_MESSAGES: Record<string, string> = {
  'invalid character class range': 'invalid character class range',
  'invalid escape sequence': 'invalid escape sequence',
  'invalid named capture': 'invalid named capture group',
  'duplicate capture group name': 'invalid named capture group',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'missing closing ]': 'missing ]',
  'missing closing )': 'missing )',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'trailing backslash at end of expression': 'trailing \\',
  'unexpected )': 'unexpected )',
};

// The renderer wraps every pattern in groups of these names (markdown/patterns.ts).
const RESERVED_GROUPS = new Set(['linkifier_before_match', 'linkifier_actual_match', 'linkifier_after_match']);

/** The pattern's named groups, or the "Bad regular expression" message. */
export function compilePattern(pattern: string): { groups: string[] } | { error: string } {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    const e = err as { error?: string; input?: string | null };
    if (typeof e.error !== 'string') return { error: 'Unknown regular expression error' };
    const text = RE2_MESSAGES[e.error] ?? e.error;
    return { error: `Bad regular expression: ${e.input ? `${text}: ${e.input}` : text}` };
  }
  const groups = Object.keys(compiled.namedGroups());
  const reserved = groups.find((g) => RESERVED_GROUPS.has(g));
  if (reserved) return { error: `Bad regular expression: invalid named capture group: ${reserved}` };
  return { groups };
}

const OPERATORS = '+#./;?&';
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;
const VARSPEC = /^(.*?)(?::[1-9][0-9]{0,3}|\*)?$/;

/**
 * The variable names of an RFC 6570 template, or null when it is not one.
 * Literal text is taken as it is (as the reference server's validator does);
 * only braces must pair up into well-formed expressions.
 */
export function templateVariables(template: string): string[] | null {
  const names: string[] = [];
  const expressions = /\{([^{}]*)\}/g;
  let literalStart = 0;
  for (const m of template.matchAll(expressions)) {
    if (/[{}]/.test(template.slice(literalStart, m.index))) return null;
    literalStart = m.index + m[0].length;
    let body = m[1]!;
    if (body !== '' && OPERATORS.includes(body[0]!)) body = body.slice(1);
    if (body === '') return null;
    for (const spec of body.split(',')) {
      const name = VARSPEC.exec(spec)![1]!;
      if (!VARNAME.test(name)) return null;
      names.push(name);
    }
  }
  if (/[{}]/.test(template.slice(literalStart))) return null;
  return [...new Set(names)];
}

/** Every problem of a (stripped) pattern and URL template, keyed as the reference server keys them. */
export function linkifierErrors(pattern: string, urlTemplate: string): ValidationErrors {
  const errors: ValidationErrors = {};
  const add = (key: string, msg: string) => (errors[key] ??= []).push(msg);
  if (pattern === '') add('pattern', BLANK);
  else if (pattern.length > MAX_PATTERN_LENGTH) add('pattern', tooLong(MAX_PATTERN_LENGTH, pattern));
  if (urlTemplate.length > MAX_TEMPLATE_LENGTH) {
    add('url_template', tooLong(MAX_TEMPLATE_LENGTH, urlTemplate));
    return errors;
  }
  const variables = templateVariables(urlTemplate);
  if (urlTemplate === '') add('url_template', BLANK);
  else if (variables === null) add('url_template', 'Invalid URL template.');
  else if (isUnsafeLink(urlTemplate)) add('url_template', UNSAFE_TEMPLATE);
  if (pattern.length > MAX_PATTERN_LENGTH) return errors;

  const compiled = compilePattern(pattern);
  if ('error' in compiled) {
    add(NON_FIELD_ERRORS, compiled.error);
  } else if (variables !== null) {
    const groups = new Set(compiled.groups);
    const notInPattern = variables.filter((v) => !groups.has(v)).sort();
    const notInTemplate = compiled.groups.filter((g) => !variables.includes(g)).sort();
    if (notInPattern.length > 0) {
      add(NON_FIELD_ERRORS, `Group '${notInPattern[0]}' in URL template is not present in linkifier pattern.`);
    } else if (notInTemplate.length > 0) {
      add(NON_FIELD_ERRORS, `Group '${notInTemplate[0]}' in linkifier pattern is not present in URL template.`);
    }
  }
  return errors;
}

/** The message Django gives for a second linkifier with the same pattern. */
export const DUPLICATE_PATTERN = 'Realm filter with this Realm and Pattern already exists.';

/** 400 BAD_REQUEST with the first message and the whole `errors` dict. */
export function validationFailure(errors: ValidationErrors): ApiError {
  const first = Object.values(errors)[0]![0]!;
  return new ApiError('BAD_REQUEST', first, { data: { errors } });
}
