// Register's `realm_incoming_webhook_bots`: the integrations this server offers.
import type { StateSection } from '../events/state.ts';
import { INTEGRATIONS } from './index.ts';

export const incomingWebhookBotsSection: StateSection = {
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
