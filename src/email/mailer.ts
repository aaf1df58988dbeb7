// Email, minimal: one interface that every domain sends through. Until the
// server speaks SMTP (a later issue), the default writes each message as a
// file under DATA_DIR/outbox and logs it, so an operator (and the tests) can
// read what would have been sent.

import { mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';

export interface Email {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(email: Email): Promise<void>;
}

/** `<dataDir>/outbox`, or a fresh temporary folder when nothing is kept (':memory:'). */
export function outboxDir(config: { dataDir: string; outboxDir: string | undefined }): string {
  if (config.outboxDir) return config.outboxDir;
  if (config.dataDir === ':memory:') return mkdtempSync(join(tmpdir(), 'confab-outbox-'));
  return join(config.dataDir, 'outbox');
}

const header = (value: string): string => value.replace(/[\r\n]+/g, ' ');

/** An RFC 5322 message: text, or text and HTML as multipart/alternative. */
export function formatEmail(email: Email, from: string, date: Date): string {
  const head = [`From: ${header(from)}`, `To: ${header(email.to)}`, `Subject: ${header(email.subject)}`, `Date: ${date.toUTCString()}`, 'MIME-Version: 1.0'];
  if (email.html === undefined) {
    return [...head, 'Content-Type: text/plain; charset=utf-8', '', email.text, ''].join('\r\n');
  }
  const boundary = `confab-${randomBytes(8).toString('hex')}`;
  return [
    ...head,
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    email.text,
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    email.html,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

export function outboxMailer(dir: string, from: string, log: Logger): Mailer {
  return {
    async send(email) {
      await mkdir(dir, { recursive: true });
      const now = new Date();
      // Time first, so that a listing is in sending order.
      const file = join(dir, `${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
      await writeFile(file, formatEmail(email, from, now));
      log.info({ to: email.to, subject: email.subject, file }, 'email written to the outbox');
    },
  };
}
