// Everything a route or an action needs from the running server, in one object.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/schema.ts';
import type { EventPublisher } from './events/types.ts';
import type { RateLimiter } from './auth/rate-limit.ts';
import type { PasswordHasher } from './auth/passwords.ts';
import type { QueueRegistry } from './events/queues.ts';
import type { RemoteQueues } from './events/fetch.ts';
import type { CredentialCache } from './auth/credential-cache.ts';
import type { ViewerCache } from './channels/viewer-cache.ts';
import type { LinkifierCache } from './linkifiers/cache.ts';
import type { UserListCache } from './users/list-cache.ts';
import type { RenderPool } from './markdown/index.ts';
import type { FileStorage } from './uploads/storage.ts';
import type { Mailer } from './email/mailer.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { Lifecycle } from './health/routes.ts';
import type { DomainHooks } from './hooks.ts';

export interface Services {
  config: Config;
  db: Db;
  dbKind: 'pglite' | 'postgres';
  log: Logger;
  events: EventPublisher;
  /** This process's event queues. */
  queues: QueueRegistry;
  /** With a broker: the queues other processes hold. */
  remoteQueues?: RemoteQueues;
  rateLimiter: RateLimiter;
  credentials: CredentialCache;
  /** Viewers' groups and subscriptions and narrowed channels, for GET /messages. */
  viewers: ViewerCache;
  /** Each organization's linkifiers, for renders outside a transaction. */
  linkifiers: LinkifierCache;
  /** Each organization's user list as register sends it. */
  userLists: UserListCache;
  /** Worker threads that render Markdown with time and size limits. */
  markdown: RenderPool;
  passwords: PasswordHasher;
  /** Uploaded files, avatars, icons and emoji images. */
  storage: FileStorage;
  /** HMAC key of the image proxy's signed URLs (previews/secret.ts). */
  imageProxyKey: string;
  /** Sends an email; only the email job calls it (email/queue.ts: queueEmail in a transaction). */
  mailer: Mailer;
  /** Prometheus metrics (served at /metrics when METRICS_TOKEN is set). */
  metrics: Metrics;
  /** Starting, serving or stopping: what /ready reports. */
  lifecycle: Lifecycle;
  /** Answers lower domains get from higher ones (wiring.ts), built once with the services. */
  hooks: DomainHooks;
}

/** What a read that consults the hooks (who may see whom, channel stats...) needs. */
export type Hooked = Pick<Services, 'hooks'>;
