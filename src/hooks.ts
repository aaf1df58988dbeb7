// Where a lower domain needs a higher one's answer, it asks through one of these
// hooks. wiring.ts builds them once, with the services (buildServices), so that
// imports still point downwards and no process can run with a hook missing.

import type { UserLifecycleHooks } from './users/actions.ts';
import type { UserAccessSource } from './users/queries.ts';
import type { GroupUseSource } from './user_groups/objections.ts';
import type { ChannelStatsSource } from './channels/format.ts';
import type { NamedTopicCheck } from './channels/actions.ts';
import type { UnsubscribeHook } from './channels/subscription-actions.ts';
import type { NoticeSender } from './notification_bot/index.ts';
import type { MessageSentHook } from './messages/send/send.ts';
import type { RealmCreatedHook } from './realm/actions.ts';
import type { ReferenceResolver } from './rendering/index.ts';
import type { Tx } from './db/transact.ts';
import type { Services } from './services.ts';
import type { User } from './users/tables.ts';

export interface DomainHooks {
  /** What other domains do when an account is created, deactivated or reactivated (in its transaction). */
  readonly userLifecycle: readonly UserLifecycleHooks[];
  /** Relations that make users visible to each other when can_access_all_users_group limits it. */
  readonly userAccessSources: readonly UserAccessSource[];
  /** Domains whose settings may object to deactivating a group. */
  readonly groupUseSources: readonly GroupUseSource[];
  /** first_message_id and traffic of channels (messages). */
  readonly channelStats: ChannelStatsSource;
  /** Whether a channel has messages outside the empty topic (messages). */
  readonly namedTopicCheck: NamedTopicCheck;
  /** After a user leaves a channel (messages: marks it read). */
  readonly afterUnsubscribe: UnsubscribeHook;
  /** Posts one Notification Bot (or system bot) message (messages/send/send.ts). */
  readonly sendNotice: NoticeSender;
  /** Runs in a send's transaction (outgoing webhooks). */
  readonly messageSent: readonly MessageSentHook[];
  /** What a new organization starts with (onboarding), in its transaction. */
  readonly realmCreated: RealmCreatedHook;
  /** A long-term idle user's request: their missing messages first, then they are active (messages/soft-deactivation.ts). */
  readonly softReactivate: (svc: Services, user: User) => Promise<void>;
  /** Idle users caught up before their subscriptions change (messages/soft-deactivation.ts). */
  readonly catchUpIdle: (tx: Tx, userIds: Iterable<number>) => Promise<void>;
  /** What a Markdown text refers to (users, groups, channels...), each domain's resolver (rendering/resolvers.ts). */
  readonly referenceResolvers: readonly ReferenceResolver[];
}
