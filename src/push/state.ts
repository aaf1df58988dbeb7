// Register's `push_devices`: `{"<push_account_id>": {status, error_code}}` for the caller's registrations.

import type { StateSection } from '../events/state.ts';
import { pushDevicesOf } from './queries.ts';

type PushDevices = Awaited<ReturnType<typeof pushDevicesOf>>;

export const pushDevicesSection: StateSection<{ push_devices: PushDevices }> = {
  types: ['push_device'],
  async fetch(ctx) {
    return { push_devices: ctx.user ? await pushDevicesOf(ctx.svc.db, ctx.user.id) : {} };
  },
  apply(state, event) {
    if (event.type !== 'push_device') return;
    state.push_devices[event.push_account_id] = { status: event.status, error_code: event.error_code ?? null };
  },
};
