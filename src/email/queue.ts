// The email queue: every email the server sends is a job (jobs/worker.ts),
// inserted in the transaction of the change that causes it, so a request that
// fails sends nothing and a committed one cannot lose its email across a
// restart. The worker sends it after the commit, with the mailer's timeout,
// and backs off after a failure (a 5xx answer gives up at once).

import type { Tx } from '../db/transact.ts';
import type { JobKind } from '../jobs/worker.ts';
import { enqueueJob, PermanentJobError } from '../jobs/worker.ts';
import { PermanentMailError, type Email } from './mailer.ts';

export const EMAIL_JOB = 'email';

/** Attempts in all: with doubling waits from EMAIL_RETRY_MS (30 s), the last is about 2 hours after the first. */
const MAX_ATTEMPTS = 9;

/** Queues `email` in the caller's transaction; the job worker sends it after the commit. */
export async function queueEmail(tx: Tx, realmId: number | null, email: Email): Promise<void> {
  await enqueueJob(tx, { realmId, kind: EMAIL_JOB, payload: { ...email } });
}

export const emailJob: JobKind = {
  maxAttempts: MAX_ATTEMPTS,
  // Longer than the SMTP timeouts (connect, greeting, each answer) of one message.
  leaseMs: 5 * 60_000,
  backoffMs: (attempt, config) => Math.min(config.emailRetryMs * 2 ** (attempt - 1), 6 * 3600_000),
  async run(svc, job) {
    const email = job.payload as unknown as Email;
    try {
      await svc.mailer.send(email);
    } catch (err) {
      if (err instanceof PermanentMailError) throw new PermanentJobError(err.message);
      svc.log.warn({ err, jobId: job.id, to: email.to, attempt: job.attempts }, 'email not sent; it will be retried');
      throw err;
    }
  },
};
