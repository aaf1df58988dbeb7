// GET /accounts/confirm_new_email/<token>: the link emailed to a new address.
// A person follows it in a browser, so the answer is a short page, not JSON
// (outside the Router, like the avatar routes); the change is made on the GET,
// as the reference's confirm_email_change makes it.

import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError } from '../http/errors.ts';
import { getRealmBySubdomain, realmUrl, subdomainFromHost } from '../realm/queries.ts';
import { escapeHtml } from '../markdown/util.ts';
import { confirmEmailChange } from './email-change.ts';

const page = (title: string, body: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;

export function registerEmailChangeRoute(app: FastifyInstance, svc: Services): void {
  app.get<{ Params: { token: string } }>('/accounts/confirm_new_email/:token', async (req, reply) => {
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const realm = await getRealmBySubdomain(svc.db, subdomainFromHost(req.headers.host, svc.config.externalUrl));
    try {
      const done = await confirmEmailChange(svc, realm, req.params.token);
      const home = realmUrl(done.realm, svc.config);
      return page(
        'Email address changed',
        `<p>Your email address is now <b>${escapeHtml(done.email)}</b>.</p>\n<p><a href="${escapeHtml(home)}/">Continue to ${escapeHtml(done.realm.name)}</a></p>`,
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      reply.code(err.status);
      return page('Email address not changed', `<p>${escapeHtml(err.message)}</p>`);
    }
  });
}
