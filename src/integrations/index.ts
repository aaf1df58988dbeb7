// The incoming-webhook integrations, at the reference's names. Each is one
// small file turning a service's payload into messages; adding one is a file
// here, a line in INTEGRATIONS and a folder of recorded payloads under
// test/fixtures/webhooks/<name>/.

import type { WebhookMessage, WebhookRequest } from './payload.ts';
import { alertmanager } from './alertmanager.ts';
import { grafana } from './grafana.ts';
import { slackIncoming } from './slack_incoming.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';

export interface Integration {
  /** The URL's name: /api/v1/external/<name>. */
  name: string;
  displayName: string;
  /** The event types it can filter on, or null. */
  allEventTypes: readonly string[] | null;
  /** The messages a request becomes (none: nothing to say); throws ApiErrors for what it cannot read. */
  handle(req: WebhookRequest, opts: { userTopic: string | undefined }): WebhookMessage[];
}

export const INTEGRATIONS: readonly Integration[] = [alertmanager, github, gitlab, grafana, slackIncoming];

export function integrationNamed(name: string): Integration | undefined {
  return INTEGRATIONS.find((i) => i.name === name);
}
