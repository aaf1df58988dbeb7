// Where one domain answers a question another asks, the answer is plugged in
// here, once, so that the lower domain does not import the higher one.

import { registerChannelStatsSource } from './channels/format.ts';
import { channelStats } from './messages/channel-stats.ts';

let wired = false;

export function wireDomains(): void {
  if (wired) return;
  wired = true;
  registerChannelStatsSource(channelStats);
}
