// A local SMTP server in the test process (the smtp-server package): it
// receives what Confab sends through EMAIL_URL, checks the URL's credentials,
// and can refuse the next messages (4xx: retried; 5xx: given up) to test the
// email queue's retries.

import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedEmail {
  to: string[];
  from: string;
  subject: string;
  /** The text/plain part, decoded. */
  text: string;
  /** The text/html part, decoded ('' when none). */
  html: string;
  raw: string;
}

export interface TestSmtpServer {
  /** smtp://user:pass@127.0.0.1:<port>, for EMAIL_URL. */
  url: string;
  received: ReceivedEmail[];
  /** Refuses the next `count` messages with this SMTP code at RCPT TO. */
  refuseNext(count: number, code: number): void;
  /** Refuses the next `count` logins (535), as a server whose password changed. */
  refuseLoginNext(count: number): void;
  /** How many messages were refused so far. */
  refusals: number;
  /** Waits until an email matching `match` has arrived (polls; generous timeout, not a measurement). */
  waitFor(match: (m: ReceivedEmail) => boolean, timeoutMs?: number): Promise<ReceivedEmail>;
  close(): Promise<void>;
}

const USER = 'confab';
const PASS = 'smtp-secret';

function decodeQuotedPrintable(s: string): string {
  const bytes: number[] = [];
  const soft = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const m = soft[i] === '=' ? /^[0-9A-Fa-f]{2}$/.exec(soft.slice(i + 1, i + 3)) : null;
    if (m) {
      bytes.push(parseInt(m[0], 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeHeader(value: string): string {
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
    kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

function splitHead(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, at).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.slice(at + 4) };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The text and HTML parts of a message (single part or multipart/alternative). */
export function parseEmail(raw: string): Omit<ReceivedEmail, 'to' | 'raw'> {
  const { headers, body } = splitHead(raw);
  const type = headers.get('content-type') ?? 'text/plain';
  let text = '';
  let html = '';
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (boundary) {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break;
      const p = splitHead(part.replace(/^\r\n/, ''));
      const decoded = decodeBody(p.headers, p.body).replace(/\r\n$/, '');
      if ((p.headers.get('content-type') ?? '').startsWith('text/html')) html = decoded;
      else text = decoded;
    }
  } else if (type.startsWith('text/html')) {
    html = decodeBody(headers, body);
  } else {
    text = decodeBody(headers, body);
  }
  return { from: decodeHeader(headers.get('from') ?? ''), subject: decodeHeader(headers.get('subject') ?? ''), text: text.replace(/\r\n/g, '\n'), html };
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedEmail[] = [];
  let refuse = { count: 0, code: 451 };
  const state = { refusals: 0, loginRefusals: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    // No reverse DNS of the client (a slow resolver would stall every message).
    disableReverseLookup: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (state.loginRefusals > 0) {
        state.loginRefusals--;
        state.refusals++;
        return callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
      }
      if (auth.username === USER && auth.password === PASS) return callback(null, { user: USER });
      return callback(new Error('Invalid username or password'));
    },
    onRcptTo(_address, _session, callback) {
      if (refuse.count > 0) {
        refuse.count--;
        state.refusals++;
        const err = Object.assign(new Error(refuse.code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: refuse.code });
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({ ...parseEmail(raw), to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${USER}:${PASS}@127.0.0.1:${port}`,
    received,
    refuseNext(count, code) {
      refuse = { count, code };
    },
    refuseLoginNext(count) {
      state.loginRefusals = count;
    },
    get refusals() {
      return state.refusals;
    },
    async waitFor(match, timeoutMs = 120_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no such email arrived; received: ${JSON.stringify(received.map((m) => [m.to, m.subject]))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
