import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import fc from 'fast-check';
import { p, parseParams, ignoredParameters, jsonOrText, type ParamSource } from '../../src/http/params.ts';
import { ApiError } from '../../src/http/errors.ts';

function source(values: Record<string, string>): ParamSource {
  return { get: (k) => values[k], keys: () => Object.keys(values) };
}

function error(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${e}`);
    return e;
  }
  assert.fail('expected an error');
}

test('JSON-encoded values are parsed strictly', () => {
  const specs = { n: p.int(), b: p.bool(), l: p.intList(), o: p.json(z.object({ a: z.int() })) };
  const { values } = parseParams(specs, source({ n: '5', b: 'true', l: '[1,2]', o: '{"a":1}' }));
  assert.deepEqual(values, { n: 5, b: true, l: [1, 2], o: { a: 1 } });

  assert.equal(error(() => parseParams({ n: p.int() }, source({ n: '"5"' }))).message, 'n is not an integer');
  assert.equal(error(() => parseParams({ n: p.int() }, source({ n: '1.5' }))).message, 'n is not an integer');
  assert.equal(error(() => parseParams({ n: p.int() }, source({ n: '5.0' }))).message, 'n is not an integer');
  assert.equal(error(() => parseParams({ n: p.int() }, source({ n: 'abc' }))).message, 'n is not valid JSON');
  assert.equal(error(() => parseParams({ b: p.bool() }, source({ b: 'True' }))).message, 'b is not valid JSON');
  assert.equal(error(() => parseParams({ b: p.bool() }, source({ b: '1' }))).message, 'b is not a boolean');
  assert.equal(error(() => parseParams({ l: p.intList() }, source({ l: '{}' }))).message, 'l is not a list');
  assert.equal(error(() => parseParams({ l: p.intList() }, source({ l: '[1,"a"]' }))).message, 'l[1] is not an integer');
  assert.equal(error(() => parseParams({ o: p.json(z.object({ a: z.int() })) }, source({ o: '[]' }))).message, 'o is not a dict');
});

test('nested failures name the path the way Zulip does', () => {
  const narrow = p.json(z.array(z.object({ operator: z.string(), operand: z.string() })));
  const err = error(() => parseParams({ narrow }, source({ narrow: '[{"operator":"is","operand":5}]' })));
  assert.equal(err.code, 'BAD_REQUEST');
  assert.equal(err.message, 'narrow[0]["operand"] is not a string');
});

test('string bounds and choices', () => {
  assert.equal(error(() => parseParams({ t: p.str(z.string().max(3)) }, source({ t: 'abcd' }))).message, 't is too long (limit: 3 characters)');
  assert.equal(error(() => parseParams({ t: p.str(z.string().trim().min(1)) }, source({ t: '  ' }))).message, 't cannot be blank');
  assert.equal(error(() => parseParams({ op: p.choice(['add', 'remove']) }, source({ op: 'x' }))).message, 'Invalid op');
  assert.equal(error(() => parseParams({ n: p.int(z.int().min(0)) }, source({ n: '-1' }))).message, 'n is too small');
  assert.equal(error(() => parseParams({ n: p.int(z.int().max(9)) }, source({ n: '10' }))).message, 'n is too large');
});

test('a missing required parameter is REQUEST_VARIABLE_MISSING with var_name', () => {
  const err = error(() => parseParams({ content: p.str() }, source({})));
  assert.equal(err.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal(err.message, "Missing 'content' argument");
  assert.deepEqual(err.data, { var_name: 'content' });
  assert.equal(err.status, 400);
});

test('defaults, optional values and aliases', () => {
  const specs = { a: p.int().default(7), b: p.str().optional(), topic: p.str().alias('subject') };
  assert.deepEqual(parseParams(specs, source({ subject: 'x' })).values, { a: 7, b: undefined, topic: 'x' });
  const err = error(() => parseParams(specs, source({ topic: 'x', subject: 'y' })));
  assert.equal(err.code, 'REQUEST_CONFUSING_VAR');
  assert.equal(err.message, "Can't decide between 'topic' and 'subject' arguments");
  assert.deepEqual(err.data, { var_name1: 'topic', var_name2: 'subject' });
});

test('unconsumed keys are reported sorted', () => {
  const src = source({ zeta: '1', content: 'x', alpha: '2' });
  const { consumed } = parseParams({ content: p.str() }, src);
  assert.deepEqual(ignoredParameters(src, consumed), ['alpha', 'zeta']);
});

test('plain integers and booleans take the short path with the same answers and errors', () => {
  const parse = (specs: Parameters<typeof parseParams>[0], values: Record<string, string>) => parseParams(specs, source(values)).values;
  assert.deepEqual(parse({ n: p.int(), b: p.bool() }, { n: '-0', b: 'false' }), { n: -0, b: false });
  assert.equal(parse({ n: p.int() }, { n: '123456789012345' }).n, 123456789012345);
  // 19 digits: past the short path, then refused as before (not a safe integer).
  assert.equal(error(() => parse({ n: p.int() }, { n: '1234567890123456789' })).message, 'n is too large');
  assert.equal(error(() => parse({ n: p.int() }, { n: '05' })).message, 'n is not valid JSON');
  assert.equal(parse({ n: p.int() }, { n: ' 5 ' }).n, 5);
  // A schema still applies to plain digits.
  assert.equal(error(() => parse({ n: p.int(z.int().min(1)) }, { n: '0' })).message, 'n is too small');
  assert.equal(error(() => parse({ b: p.bool() }, { b: '1' })).message, 'b is not a boolean');
  assert.equal(parse({ b: p.bool() }, { b: ' true' }).b, true);
});

test('jsonOrText: the JSON value, else the text, as a parse that falls back would give', () => {
  const parsedOr = (raw: string) => {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  };
  for (const raw of [
    'general',
    'news',
    'true',
    ' false\n',
    'null',
    'nullx',
    'trueish',
    '["a"]',
    ' 12',
    '-3',
    '"q"',
    '{}',
    '',
    ' ',
    'a@b.c,d@e.f',
    '\u00a0[1]',
  ]) {
    assert.deepEqual(jsonOrText(raw), parsedOr(raw), raw);
  }
  const jsonish = fc.oneof(
    fc.string(),
    fc.json(),
    fc.constantFrom('true', 'false', 'null').map((w) => ` ${w} `),
  );
  fc.assert(fc.property(jsonish, (raw) => assert.deepEqual(jsonOrText(raw), parsedOr(raw))));
});
