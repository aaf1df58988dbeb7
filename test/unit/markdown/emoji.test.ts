// The emoji data module that reactions also use.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  codeForUnicode,
  EMOTICON_CONVERSIONS,
  emojiCodeForName,
  emojiImageFile,
  emojiNameForCode,
  emojiNames,
  emojiNamesForCode,
  unicodeForCode,
} from '../../../src/markdown/emoji.ts';

test('names map to codes and back', () => {
  assert.equal(emojiCodeForName('airplane'), '2708');
  assert.equal(emojiCodeForName('poop'), '1f4a9');
  assert.equal(emojiCodeForName('smile'), '1f642');
  assert.equal(emojiCodeForName('woman_shrugging'), '1f937-200d-2640');
  assert.equal(emojiCodeForName('+1'), '1f44d');
  assert.equal(emojiNameForCode('1f4a9'), 'poop');
  assert.equal(emojiNameForCode('1f642'), 'smile');
  assert.equal(emojiNamesForCode('1f642')[0], 'smile');
  assert.equal(emojiCodeForName('not_an_emoji'), undefined);
  assert.equal(emojiCodeForName('fried_egg'), undefined);
  assert.equal(emojiCodeForName('skin-tone-2'), undefined);
});

test("the reference server's curated names come first", () => {
  assert.equal(emojiCodeForName('holiday_tree'), '1f384');
  assert.equal(emojiNameForCode('1f384'), 'holiday_tree');
  assert.deepEqual(emojiNamesForCode('1f44d').slice(0, 2), ['+1', 'thumbs_up']);
  assert.equal(emojiCodeForName('thumbs_up'), '1f44d');
  assert.equal(emojiCodeForName('octopus'), '1f419');
  assert.equal(emojiCodeForName('big_smile'), '1f604');
  assert.equal(emojiNameForCode('1f604'), 'big_smile');
  assert.deepEqual(emojiNamesForCode('1f600').slice(0, 2), ['grinning', 'happy']);
  assert.equal(emojiNameForCode('1f389'), 'tada');
  assert.equal(emojiCodeForName('congratulations'), '1f389');
  assert.equal(emojiCodeForName('working_on_it'), '1f6e0');
  assert.equal(emojiNameForCode('0031-20e3'), 'one');
  // A curated alias wins over another emoji's CLDR keyword.
  assert.equal(emojiCodeForName('lit'), '1f525');
});

test('our reference material wins over the curated table', () => {
  // The table's version calls U+263A `smile`; the digest and fixture say U+1F642.
  assert.deepEqual(emojiNamesForCode('1f642').slice(0, 2), ['smile', 'slight_smile']);
  assert.equal(emojiCodeForName('slight_smile'), '1f642');
  assert.equal(emojiNameForCode('263a'), 'relaxed');
  assert.equal(emojiCodeForName('relaxed'), '263a');
});

test('CLDR names cover emoji the table does not, without taking its names', () => {
  assert.equal(emojiNameForCode('1f97a'), 'pleading_face');
  // The table comments this one out, so it is the CLDR pass's.
  assert.equal(emojiNameForCode('1f52f'), 'dotted_six_pointed_star');
  assert.equal(emojiCodeForName('receipt'), '1f4c3');
  assert.equal(emojiNameForCode('1f9fe'), 'accounting');
});

test('iamcal short names are aliases where the name is free', () => {
  assert.equal(emojiCodeForName('heart_eyes'), '1f60d');
  assert.equal(emojiCodeForName('thumbsup'), '1f44d');
  assert.equal(emojiCodeForName('-1'), '1f44e');
  // Names given before keep their emoji; hyphenated compounds are not names.
  assert.equal(emojiCodeForName('smile'), '1f642');
  assert.equal(emojiCodeForName('dog'), '1f415');
  assert.equal(emojiCodeForName('man-girl-girl'), undefined);
  assert.equal(emojiCodeForName('flag-us'), undefined);
});

test('every emoticon translation names an emoji', () => {
  for (const target of Object.values(EMOTICON_CONVERSIONS)) {
    assert.ok(emojiCodeForName(target.slice(1, -1)), target);
  }
});

test('every name is unique and resolves to its emoji', () => {
  const names = emojiNames();
  assert.ok(names.length > 3000);
  assert.equal(new Set(names).size, names.length);
  for (const name of names) {
    const code = emojiCodeForName(name)!;
    assert.ok(emojiNamesForCode(code).includes(name), name);
    assert.match(name, /^[\p{L}\p{N}_+-]+$/u, name);
  }
});

test('unicode conversion drops variation selectors', () => {
  assert.equal(codeForUnicode('⬆️'), '2b06');
  assert.equal(codeForUnicode('🤷‍♀️'), '1f937-200d-2640');
  assert.equal(unicodeForCode('1f4a9'), '💩');
});

test('images come from the emoji data package', () => {
  const file = emojiImageFile('1f4a9');
  assert.ok(file && existsSync(file), String(file));
});
