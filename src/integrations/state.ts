// Register's `realm_incoming_webhook_bots`: the integrations this server offers.
import type { StateSection } from '../events/state.ts';
import { INTEGRATIONS } from './index.ts';

interface IncomingWebhookBot {
  name: string;
  display_name: string;
  all_event_types: string[] | null;
  config_options: never[];
}

export const incomingWebhookBotsSection: StateSection<{ realm_incoming_webhook_bots: IncomingWebhookBot[] }> = {
  types: ['realm_incoming_webhook_bots'],
  async fetch() {
    return {
      realm_incoming_webhook_bots: INTEGRATIONS.map((i) => ({
        name: i.name,
        display_name: i.displayName,
        all_event_types: i.allEventTypes === null ? null : [...i.allEventTypes],
        config_options: [],
      })),
    };
  },
};
