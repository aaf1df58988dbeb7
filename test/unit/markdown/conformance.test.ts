// Runs every case of the reference server's Markdown fixture and fails if a
// case that passed before (conformance-baseline.json) no longer does.
// Update the baseline with: UPDATE_MARKDOWN_BASELINE=1 node --test test/unit/markdown/conformance.test.ts

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { renderSync } from '../../../src/markdown/render.ts';
import type { RenderContext } from '../../../src/markdown/types.ts';

// The reference fixture lives beside the checkout (../shared); a copy travels with the
// repository, so that a checkout anywhere else (CI) runs the same cases.
const SHARED_FIXTURE = new URL('../../../../shared/reference/markdown-cases.json', import.meta.url);
const FIXTURE_COPY = new URL('./markdown-cases.json', import.meta.url);
const FIXTURE = existsSync(SHARED_FIXTURE) ? SHARED_FIXTURE : FIXTURE_COPY;
const BASELINE = new URL('./conformance-baseline.json', import.meta.url);

interface RegularCase {
  name: string;
  input: string;
  expected_output: string;
  marked_expected_output?: string;
  translate_emoticons?: boolean;
}

/** The reference fixture's organization: user "Zoe" (id 7) and its test server URL and image proxy key. */
function contextFor(c?: RegularCase): RenderContext {
  return {
    users: [{ id: 7, full_name: 'Zoe' }],
    server_url: 'http://zulip.testserver',
    image_proxy: { base_url: 'https://external-content.zulipcdn.net/external_content/', key: 'dummy' },
    translate_emoticons: c?.translate_emoticons ?? false,
  };
}

function linkifyExpected(template: string, url: string): string {
  if (!template.includes('%s')) return template;
  const href = url.startsWith('http') ? url : url.includes('@') ? `mailto:${url}` : `http://${url}`;
  return template.replace('%s', `<a href="${href}">${url}</a>`);
}

export function runConformance() {
  const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
    regular_tests: RegularCase[];
    linkify_tests: [string, string, string][];
  };
  const passed: string[] = [];
  const failures: { name: string; input: string; expected: string; got: string }[] = [];
  for (const c of fixture.regular_tests) {
    const got = renderSync(c.input, contextFor(c)).html;
    if (got === c.expected_output || (c.marked_expected_output !== undefined && got === c.marked_expected_output)) passed.push(c.name);
    else failures.push({ name: c.name, input: c.input, expected: c.expected_output, got });
  }
  let linkifyPassed = 0;
  fixture.linkify_tests.forEach(([input, template, url], i) => {
    const name = `linkify_${i}`;
    const expected = linkifyExpected(template, url);
    const got = renderSync(input, contextFor()).html;
    if (got === expected) {
      passed.push(name);
      linkifyPassed++;
    } else failures.push({ name, input, expected, got });
  });
  return {
    passed,
    failures,
    regular: { passed: passed.length - linkifyPassed, total: fixture.regular_tests.length },
    linkify: { passed: linkifyPassed, total: fixture.linkify_tests.length },
  };
}

test('markdown conformance against the reference cases', () => {
  const r = runConformance();
  console.log(`markdown conformance: ${r.regular.passed}/${r.regular.total} regular, ${r.linkify.passed}/${r.linkify.total} linkify`);
  if (process.env.MARKDOWN_CONFORMANCE_VERBOSE) {
    for (const f of r.failures)
      console.log(`--- ${f.name}\n  in:  ${JSON.stringify(f.input)}\n  exp: ${JSON.stringify(f.expected)}\n  got: ${JSON.stringify(f.got)}`);
  }
  if (process.env.UPDATE_MARKDOWN_BASELINE) {
    writeFileSync(BASELINE, JSON.stringify(r.passed.sort(), null, 2) + '\n');
    return;
  }
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as string[];
  const passing = new Set(r.passed);
  const regressed = baseline.filter((name) => !passing.has(name));
  assert.deepEqual(regressed, [], `cases that used to pass now fail: ${regressed.join(', ')}`);
});

test("the repository's copy of the reference fixture is the reference's", { skip: !existsSync(SHARED_FIXTURE) && 'no ../shared beside this checkout' }, () => {
  assert.equal(readFileSync(FIXTURE_COPY, 'utf8'), readFileSync(SHARED_FIXTURE, 'utf8'), 'copy ../shared/reference/markdown-cases.json to test/unit/markdown/');
});
