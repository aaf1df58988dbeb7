// Session cookies and the outbox's message format (no database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clearedCookies, readCookies, sessionCookies } from '../../src/auth/sessions.ts';
import { formatEmail } from '../../src/email/mailer.ts';
import { loadConfig } from '../../src/config.ts';

test('cookies: Secure exactly when the external URL is https; HttpOnly only for the session', () => {
  const https = loadConfig({ externalUrl: 'https://chat.example.com' }, {});
  const [session, csrf] = sessionCookies(https, 'S3cret', 'T0ken');
  assert.equal(session, 'sessionid=S3cret; Path=/; Max-Age=1209600; SameSite=Lax; HttpOnly; Secure');
  assert.equal(csrf, 'csrftoken=T0ken; Path=/; Max-Age=1209600; SameSite=Lax; Secure');
  const http = loadConfig({ externalUrl: 'http://localhost:9991' }, {});
  assert.ok(sessionCookies(http, 'a', 'b').every((c) => !c.includes('Secure')));
  assert.ok(clearedCookies(https).every((c) => c.includes('Max-Age=0')));
  assert.ok(
    sessionCookies(https, 'a', 'b').every((c) => !/Domain=/i.test(c)),
    'host-only: one organization each',
  );
});

test('readCookies: spaces, quotes, repeated names (the first wins), junk', () => {
  const c = readCookies(' a=1; b="two" ;a=3; junk; =x; csrftoken=abc');
  assert.equal(c.get('a'), '1');
  assert.equal(c.get('b'), 'two');
  assert.equal(c.get('csrftoken'), 'abc');
  assert.equal(c.has('junk'), false);
  assert.equal(readCookies(undefined).size, 0);
});

test('formatEmail: headers cannot be split by newlines; HTML as an alternative', () => {
  const raw = formatEmail(
    { to: 'a@example.com\r\nBcc: evil@example.com', subject: 'Hi\nthere', text: 'plain', html: '<p>rich</p>' },
    'Confab <noreply@x>',
    new Date(0),
  );
  const head = raw.split('\r\n\r\n')[0];
  assert.doesNotMatch(head, /^Bcc:/m);
  assert.match(head, /^Subject: Hi there$/m);
  assert.match(head, /^Content-Type: multipart\/alternative; boundary="confab-[0-9a-f]+"$/m);
  assert.ok(raw.includes('plain') && raw.includes('<p>rich</p>'));
});
