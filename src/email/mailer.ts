// Email: one interface that every domain's queued emails go out through
// (email/queue.ts runs it in the job worker, never inside a request). With
// EMAIL_URL (smtp:// or smtps://) it is an SMTP client (nodemailer); without
// it, each message is written as a file under DATA_DIR/outbox and logged, so
// an embedded server needs nothing and an operator (and tests) can read it.

import { mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { createTransport } from 'nodemailer';
import type { Config } from '../config.ts';

export interface Email {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(email: Email): Promise<void>;
}

/** An SMTP answer no retry can change (5xx: no such mailbox, refused sender...). */
export class PermanentMailError extends Error {}

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

/**
 * SMTP through nodemailer, one connection per message (emails are few; a pool
 * would hold sockets open for nothing). A 5xx refusal of the message or its
 * recipient is permanent; a timeout, a refused connection or login, or a 4xx
 * is worth another attempt.
 */
export function smtpMailer(url: string, from: string, timeoutMs: number, log: Logger): Mailer {
  const transport = createTransport({ url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }, { from });
  return {
    async send(email) {
      try {
        const info = await transport.sendMail({
          to: email.to,
          subject: email.subject,
          text: email.text,
          ...(email.html !== undefined ? { html: email.html } : {}),
        });
        log.info({ to: email.to, subject: email.subject, messageId: info.messageId }, 'email sent');
      } catch (err) {
        // Only this message's refusal is final; a refused login or connection is the server's
        // setup, which the operator can fix while the email waits.
        const { responseCode, code } = err as { responseCode?: number; code?: string };
        if (responseCode !== undefined && responseCode >= 500 && (code === 'EENVELOPE' || code === 'EMESSAGE')) {
          throw new PermanentMailError(`SMTP ${responseCode}: ${(err as Error).message}`);
        }
        throw err;
      }
    },
  };
}

/** The server's mailer: SMTP when EMAIL_URL is set, else the outbox folder. */
export function mailerFor(config: Config, log: Logger): Mailer {
  if (config.emailUrl) return smtpMailer(config.emailUrl, config.emailFrom, config.emailTimeoutMs, log);
  return outboxMailer(outboxDir(config), config.emailFrom, log);
}
