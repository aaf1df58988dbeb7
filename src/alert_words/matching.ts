// Which recipients of a message have one of their alert words in it (the
// reference's alert-word preprocessor): on the Markdown source after fenced
// blocks are set aside (no alerts from code or math blocks), lowercased, each
// word found anywhere with an allowed character (or the text's edge) on both
// sides. The reference's boundary test is reproduced as it is: it looks at the
// character before the match, and accepts any character at position 0.

import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/schema.ts';
import { fencedBlocks, hangingLists, normalizeWhitespace } from '../markdown/preprocess.ts';
import { HtmlStash } from '../markdown/stash.ts';
import { ETX, STX } from '../markdown/util.ts';

const ALLOWED_BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
// The reference lists '",' (two characters), which no single character equals: '"' is not allowed after.
const ALLOWED_AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/** The text alert words are looked for in. */
export function alertableText(content: string): string {
  try {
    let lines = hangingLists(content.replaceAll(STX, '').replaceAll(ETX, '').split('\n'));
    lines = normalizeWhitespace(lines);
    lines = fencedBlocks(lines, { stash: new HtmlStash(), formatCode: () => '', renderTex: () => null });
    return lines.join('\n').toLowerCase();
  } catch {
    // Nesting too deep to render has been refused before; the raw text is a safe answer.
    return content.toLowerCase();
  }
}

/** Whether the lowercased `word` occurs in `text` (from alertableText) with valid edges. */
export function containsAlertWord(text: string, word: string): boolean {
  if (word === '') return false;
  for (let start = text.indexOf(word); start !== -1; start = text.indexOf(word, start + 1)) {
    const before = start - 1;
    const after = start + word.length;
    const startOk = before <= 0 || ALLOWED_BEFORE.has(text[before]!);
    const endOk = after >= text.length || ALLOWED_AFTER.has(text[after]!);
    if (startOk && endOk) return true;
  }
  return false;
}

/** The alert words of `userIds` (`user_id`, `word`): what usersAlertedBy reads (a send reads it within a larger statement). */
export function alertWordsOf(db: Executor, realmId: number, userIds: readonly number[]) {
  return db.selectFrom('alert_words').select(['user_id', 'word']).where('realm_id', '=', realmId).where('user_id', '=', sql<number>`any(${userIds}::int[])`);
}

/** The alert words of the user `u` of a query (null: none), as a column of a query of users. */
export const alertWordsOfUser: RawBuilder<string[] | null> = sql<string[] | null>`(select array_agg(a.word) from alert_words a where a.user_id = u.id)`;

/** Which of `userIds` have an alert word in `content`: one query for their words. */
export async function usersAlertedBy(db: Executor, realmId: number, content: string, userIds: Iterable<number>): Promise<number[]> {
  const ids = [...userIds];
  if (ids.length === 0) return [];
  return alertedBy(content, await alertWordsOf(db, realmId, ids).execute());
}

/** Whose words (alertWordsOf's rows) occur in `content`. */
export function alertedBy(content: string, rows: readonly { user_id: number; word: string }[]): number[] {
  if (rows.length === 0) return [];
  // Each distinct word is looked for once, however many users chose it.
  const usersByWord = new Map<string, number[]>();
  for (const r of rows) {
    const word = r.word.toLowerCase();
    usersByWord.set(word, [...(usersByWord.get(word) ?? []), r.user_id]);
  }
  const text = alertableText(content);
  const alerted = new Set<number>();
  for (const [word, users] of usersByWord) {
    if (users.every((u) => alerted.has(u))) continue;
    if (containsAlertWord(text, word)) for (const u of users) alerted.add(u);
  }
  return [...alerted];
}
