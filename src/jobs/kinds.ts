// Every kind of job the worker runs, by the name stored in `jobs.kind`.
import type { JobKinds } from './worker.ts';
import { outgoingWebhookJob } from '../webhooks/outgoing/deliver.ts';
import { OUTGOING_WEBHOOK_JOB } from '../webhooks/outgoing/trigger.ts';
import { embedLinksJob } from '../previews/job.ts';
import { EMBED_LINKS_JOB } from '../previews/queue.ts';
import { EMAIL_JOB, emailJob } from '../email/queue.ts';
import { MISSED_MESSAGES_JOB, missedMessagesJob } from '../email/missed-messages.ts';

export const JOB_KINDS: JobKinds = {
  [OUTGOING_WEBHOOK_JOB]: outgoingWebhookJob,
  [EMBED_LINKS_JOB]: embedLinksJob,
  [EMAIL_JOB]: emailJob,
  [MISSED_MESSAGES_JOB]: missedMessagesJob,
};
