// What the message register sections share: which message events the user
// received a copy of, and id lists as one SQL parameter.

import type { RegisterContext } from '../events/state.ts';
import { ownSubscriptions } from '../channels/queries.ts';
import type { ServerEvent } from '../events/types.ts';
import type { ApiMessage } from './format.ts';
import type { DeleteMessageEvent } from './events.ts';

/** Ids of messages a `delete_message` event removes (bulk form or one per event). */
export function deletedIds(event: DeleteMessageEvent): number[] {
  return event.message_ids ?? (event.message_id === undefined ? [] : [event.message_id]);
}

export { intArray } from '../db/ids.ts';

/**
 * The user's subscriptions as register saw them, kept current from
 * `subscription` events. Queues that follow all public channels also get
 * messages of channels the user is not in: those are no copies of theirs.
 */
export class SubscriptionTracker {
  readonly subscribed: Set<number>;
  /** Channels the user left (unread messages there are not counted). */
  readonly left: Set<number>;

  constructor(subscribed: Iterable<number>, left: Iterable<number>) {
    this.subscribed = new Set(subscribed);
    this.left = new Set(left);
  }

  /** Each section its own tracker (apply moves it), from the one read of the subscriptions. */
  static async fetch(ctx: RegisterContext): Promise<SubscriptionTracker> {
    const rows = await ownSubscriptions(ctx);
    return new SubscriptionTracker(
      rows.filter((r) => r.active).map((r) => r.channel_id),
      rows.filter((r) => !r.active).map((r) => r.channel_id),
    );
  }

  apply(event: ServerEvent): void {
    if (event.type !== 'subscription' || (event.op !== 'add' && event.op !== 'remove')) return;
    for (const { stream_id } of event.subscriptions) {
      if (event.op === 'add') {
        this.subscribed.add(stream_id);
        this.left.delete(stream_id);
      } else {
        this.subscribed.delete(stream_id);
        this.left.add(stream_id);
      }
    }
  }

  /**
   * Whether the user has a copy of a message from a `message` event: a direct
   * message, or one in a channel they are subscribed to. Sending into a channel
   * gives no copy to an unsubscribed sender (an all_public_streams queue still
   * hears of it).
   */
  received(message: ApiMessage, _userId: number): boolean {
    return message.type === 'private' || this.subscribed.has(message.stream_id);
  }

  /** Whether such a copy can be among the unread (not in a channel the user left). */
  holdsUnread(message: ApiMessage, userId: number): boolean {
    return this.received(message, userId) && (message.type === 'private' || !this.left.has(message.stream_id));
  }
}
