// Register's topic preferences: `user_topics` (fetch type `user_topic`) and the
// deprecated `muted_topics` list (`[[channel_name, topic, timestamp]]`).

import type { RegisterContext, StateSection } from '../../events/state.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { registerChannels } from '../../channels/state.ts';
import {
  compareMutedTopics,
  compareUserTopics,
  mutedTopicEntries,
  registerTopicPolicies,
  userTopicEntries,
  VISIBILITY,
  type MutedTopicEntry,
  type UserTopicEntry,
} from './user-topics.ts';

/** Register shows the empty topic the way the client's events do (spec convention 6). */
const shown = (ctx: RegisterContext, topic: string) => (topic === '' && !ctx.capabilities.empty_topic_name ? EMPTY_TOPIC_DISPLAY_NAME : topic);
const sameTopic = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export const userTopicsSection: StateSection<{ user_topics: UserTopicEntry[] }> = {
  types: ['user_topic'],
  async fetch(ctx) {
    if (!ctx.user) return { user_topics: [] };
    const entries = userTopicEntries(await registerTopicPolicies(ctx));
    // Sorted as shown, the order events keep it in.
    return { user_topics: entries.map((e) => ({ ...e, topic_name: shown(ctx, e.topic_name) })).sort(compareUserTopics) };
  },
  apply(state, event) {
    if (event.type !== 'user_topic') return;
    // Only the entry's own fields: a queued event also carries its queue `id`.
    const { stream_id, topic_name, last_updated, visibility_policy } = event;
    const entry: UserTopicEntry = { stream_id, topic_name, last_updated, visibility_policy };
    const list = state.user_topics.filter((e) => !(e.stream_id === entry.stream_id && sameTopic(e.topic_name, entry.topic_name)));
    if (entry.visibility_policy !== VISIBILITY.INHERIT) list.push(entry);
    state.user_topics = list.sort(compareUserTopics);
  },
};

/** Channel names by id, for turning `user_topic` events into legacy entries. */
function channelNames(ctx: RegisterContext): Map<number, string> {
  let names = ctx.cache.get('muted_topics:channels') as Map<number, string> | undefined;
  if (!names) ctx.cache.set('muted_topics:channels', (names = new Map()));
  return names;
}

export const mutedTopicsSection: StateSection<{ muted_topics: MutedTopicEntry[] }> = {
  types: ['muted_topics'],
  async fetch(ctx) {
    if (!ctx.user) return { muted_topics: [] };
    const names = channelNames(ctx);
    const [channels, policies] = await Promise.all([registerChannels(ctx), registerTopicPolicies(ctx)]);
    for (const c of channels) names.set(c.id, c.name);
    return { muted_topics: mutedTopicEntries(policies, names) };
  },
  apply(state, event, ctx) {
    const names = channelNames(ctx);
    let list = state.muted_topics;
    switch (event.type) {
      case 'muted_topics':
        list = event.muted_topics.map((e): MutedTopicEntry => [...e]);
        break;
      // A queue that also takes user_topic gets no muted_topics events: follow those instead.
      case 'user_topic': {
        const name = names.get(event.stream_id);
        if (name === undefined) return;
        // Legacy entries keep the empty topic as is (the shaper renamed it for this client).
        const topic = !ctx.capabilities.empty_topic_name && event.topic_name === EMPTY_TOPIC_DISPLAY_NAME ? '' : event.topic_name;
        list = list.filter(([channel, t]) => !(channel === name && sameTopic(t, topic)));
        if (event.visibility_policy === VISIBILITY.MUTED) list.push([name, topic, event.last_updated]);
        break;
      }
      case 'stream': {
        if (event.op === 'create') for (const c of event.streams) names.set(c.stream_id, c.name);
        if (event.op !== 'update' || event.property !== 'name' || typeof event.value !== 'string') return;
        const renamed = event.value;
        const old = names.get(event.stream_id) ?? event.name;
        names.set(event.stream_id, renamed);
        list = list.map(([channel, t, ts]): MutedTopicEntry => [channel === old ? renamed : channel, t, ts]);
        break;
      }
      default:
        return;
    }
    state.muted_topics = list.sort(compareMutedTopics);
  },
};
