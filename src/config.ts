// Server configuration, read once from the environment. Tests build their own
// Config objects with `loadConfig({...overrides})`.

export interface Config {
  /** postgres://... selects a real PostgreSQL server; otherwise embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  /** Keep planned statements prepared per PostgreSQL connection; DATABASE_PREPARED_STATEMENTS=false for a pooler that cannot (PgBouncer's transaction mode before 1.21). */
  databasePreparedStatements: boolean;
  /** redis://... shares events, queues, rate limits and cache invalidation between processes. */
  brokerUrl: string | undefined;
  /** Starts every broker key and channel, so that deployments (and test servers) can share one broker. */
  brokerPrefix: string;
  /** Server processes behind the one port (WORKERS); more than one needs databaseUrl and brokerUrl. */
  workers: number;
  /** Where PGlite keeps its files, uploads live and queues are saved on shutdown. ':memory:' keeps nothing. */
  dataDir: string;
  /** Uploaded files (attachments, avatars, icons, custom emoji); default `<dataDir>/uploads` (a temporary directory with ':memory:'). */
  uploadsDir: string | undefined;
  /** The largest file POST /user_uploads takes (MAX_FILE_UPLOAD_SIZE_MIB, the reference's 25). */
  maxFileUploadMib: number;
  /** EMAIL_URL: smtp://user:pass@host:port or smtps://...; unset, emails are written to the outbox (email/mailer.ts). */
  emailUrl: string | undefined;
  /** Where emails are written without EMAIL_URL; default `<dataDir>/outbox` (email/mailer.ts). */
  outboxDir: string | undefined;
  /** The sender of the server's emails (EMAIL_FROM). */
  emailFrom: string;
  /** How long an SMTP server has to connect, greet and answer (EMAIL_TIMEOUT_MS). */
  emailTimeoutMs: number;
  /** The wait before the first retry of a failed email; it doubles after each failure (EMAIL_RETRY_MS). */
  emailRetryMs: number;
  /** How long a password-reset link works. */
  passwordResetValidityMinutes: number;
  /** The built web client (web/dist): served at `/`. */
  webClientDir: string;
  /** A new organization starts with the reference's channels and Welcome Bot's messages. */
  onboarding: boolean;
  host: string;
  port: number;
  /** Connections the kernel may queue before the server accepts them (capped by net.core.somaxconn). */
  listenBacklog: number;
  /** The public URL of the server (scheme://host[:port]); organizations live at its subdomains. */
  externalUrl: string;
  bootstrap: { email: string; password: string | undefined; orgName: string };
  rateLimit: {
    /** Authenticated API requests per user per window. */
    perUser: number;
    /** Unauthenticated requests per client address per window. */
    perIp: number;
    windowSeconds: number;
    /** Failed password logins per username per window before 429. */
    loginFailures: number;
    loginWindowSeconds: number;
  };
  /** argon2 cost; tests lower it, production keeps the library's recommended values. */
  passwordHash: { memoryCost: number; timeCost: number };
  events: {
    /** A parked long-poll gets a heartbeat after this many ms plus up to heartbeatJitterMs. */
    heartbeatMs: number;
    heartbeatJitterMs: number;
    /** A queue with no connection for this long is collected. */
    queueTimeoutMs: number;
    /** How often the collector sweeps. */
    gcIntervalMs: number;
  };
  /**
   * How long an authenticated API key (and an organization's linkifiers, linkifiers/cache.ts) is
   * remembered. Every change made through a server (or the manage command with the broker)
   * forgets it at once; this bounds what another process leaves stale unseen: 5 s on PostgreSQL
   * without a broker (a manage command there publishes nowhere), 10 minutes otherwise (longer
   * than a long-poll, so a user's next poll reads nothing).
   */
  credentialCacheMs: number;
  /** Push notification service URL; absent means PUSH_SERVICE_NOT_CONFIGURED. */
  pushServiceUrl: string | undefined;
  invitations: {
    /** Validity of an invitation when the request names none (INVITATION_LINK_VALIDITY_MINUTES). */
    validityMinutes: number;
    /** Invitations an organization may send per 24 hours, unless the operator set its own limit. */
    dailyLimit: number;
  };
  /** How often the scheduler looks for due scheduled messages and reminders. */
  schedulerIntervalMs: number;
  /** ALLOW_PRIVATE_URLS: outbound requests may reach loopback and private networks (net/outbound.ts). */
  allowPrivateUrls: boolean;
  /** CAMO_KEY: the image proxy's HMAC key; unset, one is generated and kept in the database. */
  camoKey: string | undefined;
  /** Outbound fetches for previews and the image proxy: time (ms) and size (bytes) limits. */
  previewFetch: { timeoutMs: number; maxPageBytes: number; maxImageBytes: number };
  /** How long an outgoing webhook's service has to answer. */
  outgoingWebhookTimeoutMs: number;
  /** How often the job worker looks for due jobs (jobs/worker.ts). */
  jobIntervalMs: number;
  retention: {
    /** How often the retention pass runs (RETENTION_INTERVAL_MS, a day). */
    intervalMs: number;
    /** Archived messages can be restored for this many days (ARCHIVED_DATA_VACUUMING_DELAY_DAYS). */
    vacuumDays: number;
    /** Uploads no message links are deleted after this many days (UNCLAIMED_UPLOADS_DAYS; 0 keeps them). */
    unclaimedUploadsDays?: number;
  };
  softDeactivation: {
    /** Users with no activity for this many days become long-term idle (SOFT_DEACTIVATION_DAYS, 28 as the reference). */
    days: number;
    /** How often the pass runs (SOFT_DEACTIVATION_INTERVAL_MS, a day; 0 turns it off). */
    intervalMs: number;
    /** The pass also adds idle users' missing copies, keeping them idle (the reference's AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS). */
    catchUp: boolean;
  };
  /** Bearer token for GET /metrics; unset, the endpoint does not exist. */
  metricsToken: string | undefined;
  logLevel: string;
  /** Also accept and announce the reference's names (zulip_version, client_gravatar, ...); COMPAT_NAMES=false turns them off. */
  compatNames: boolean;
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`expected an integer, got ${JSON.stringify(value)}`);
  return n;
}

export function loadConfig(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 9991);
  const host = env.HOST ?? '127.0.0.1';
  const base: Config = {
    databaseUrl: env.DATABASE_URL || undefined,
    databasePreparedStatements: !['false', '0', 'no', 'off'].includes((env.DATABASE_PREPARED_STATEMENTS ?? '').toLowerCase()),
    brokerUrl: env.BROKER_URL || undefined,
    brokerPrefix: env.BROKER_PREFIX || 'confab',
    workers: int(env.WORKERS, 1),
    dataDir: env.DATA_DIR ?? './data',
    uploadsDir: env.UPLOADS_DIR || undefined,
    maxFileUploadMib: int(env.MAX_FILE_UPLOAD_SIZE_MIB, 25),
    emailUrl: env.EMAIL_URL || undefined,
    outboxDir: env.OUTBOX_DIR || undefined,
    emailFrom: env.EMAIL_FROM ?? 'Confab <noreply@localhost>',
    emailTimeoutMs: int(env.EMAIL_TIMEOUT_MS, 30_000),
    emailRetryMs: int(env.EMAIL_RETRY_MS, 30_000),
    passwordResetValidityMinutes: int(env.PASSWORD_RESET_VALIDITY_MINUTES, 1440),
    webClientDir: env.WEB_CLIENT_DIR ?? new URL('../web/dist', import.meta.url).pathname,
    onboarding: true,
    host,
    port,
    listenBacklog: int(env.LISTEN_BACKLOG, 16384),
    externalUrl: (env.EXTERNAL_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    bootstrap: {
      email: env.BOOTSTRAP_EMAIL ?? 'owner@example.com',
      password: env.BOOTSTRAP_PASSWORD || undefined,
      orgName: env.BOOTSTRAP_ORG_NAME ?? 'Confab',
    },
    rateLimit: {
      perUser: int(env.RATE_LIMIT_PER_USER, 200),
      perIp: int(env.RATE_LIMIT_PER_IP, 100),
      windowSeconds: int(env.RATE_LIMIT_WINDOW_SECONDS, 60),
      loginFailures: int(env.LOGIN_FAILURE_LIMIT, 5),
      loginWindowSeconds: int(env.LOGIN_FAILURE_WINDOW_SECONDS, 1800),
    },
    passwordHash: { memoryCost: int(env.ARGON2_MEMORY_KIB, 19456), timeCost: int(env.ARGON2_TIME_COST, 2) },
    events: {
      heartbeatMs: int(env.EVENT_HEARTBEAT_MS, 45_000),
      heartbeatJitterMs: int(env.EVENT_HEARTBEAT_JITTER_MS, 10_000),
      queueTimeoutMs: int(env.EVENT_QUEUE_TIMEOUT_MS, 600_000),
      gcIntervalMs: int(env.EVENT_QUEUE_GC_INTERVAL_MS, 60_000),
    },
    credentialCacheMs: 0,
    pushServiceUrl: env.PUSH_SERVICE_URL || undefined,
    invitations: {
      validityMinutes: int(env.INVITATION_LINK_VALIDITY_MINUTES, 14400),
      dailyLimit: int(env.INVITES_DAILY_LIMIT, 100),
    },
    schedulerIntervalMs: int(env.SCHEDULER_INTERVAL_MS, 2000),
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS === 'true',
    camoKey: env.CAMO_KEY || undefined,
    previewFetch: {
      timeoutMs: int(env.PREVIEW_FETCH_TIMEOUT_MS, 10_000),
      maxPageBytes: int(env.PREVIEW_MAX_PAGE_BYTES, 1024 * 1024),
      maxImageBytes: int(env.IMAGE_PROXY_MAX_BYTES, 25 * 1024 * 1024),
    },
    outgoingWebhookTimeoutMs: int(env.OUTGOING_WEBHOOK_TIMEOUT_MS, 10_000),
    jobIntervalMs: int(env.JOB_INTERVAL_MS, 1000),
    retention: {
      intervalMs: int(env.RETENTION_INTERVAL_MS, 86_400_000),
      vacuumDays: int(env.ARCHIVED_DATA_VACUUMING_DELAY_DAYS, 30),
      // The reference's delete_old_unclaimed_attachments keeps them 5 weeks.
      unclaimedUploadsDays: int(env.UNCLAIMED_UPLOADS_DAYS, 35),
    },
    softDeactivation: {
      days: int(env.SOFT_DEACTIVATION_DAYS, 28),
      intervalMs: int(env.SOFT_DEACTIVATION_INTERVAL_MS, 86_400_000),
      catchUp: env.SOFT_DEACTIVATION_CATCH_UP !== 'false',
    },
    metricsToken: env.METRICS_TOKEN || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    compatNames: !['false', '0', 'no', 'off'].includes((env.COMPAT_NAMES ?? '').toLowerCase()),
  };
  const config = { ...base, ...overrides };
  config.credentialCacheMs = overrides.credentialCacheMs ?? int(env.CREDENTIAL_CACHE_MS, defaultCredentialCacheMs(config));
  checkScaleOut(config);
  return config;
}

/**
 * Where every process that changes the database publishes to the same bus (the embedded database
 * has one process; a broker carries every notice), the cache forgets each change exactly.
 */
function defaultCredentialCacheMs(config: Config): number {
  return config.databaseUrl && !config.brokerUrl ? 5000 : 600_000;
}

/** Several processes share state only through PostgreSQL and the broker. */
export function checkScaleOut(config: Config): void {
  if (config.brokerUrl && !/^rediss?:\/\//.test(config.brokerUrl)) {
    throw new Error(`BROKER_URL must be redis://... or rediss://... (got ${config.brokerUrl}); see docs/DEPLOYMENT.md`);
  }
  if (config.workers < 1) throw new Error('WORKERS must be at least 1');
  if (config.workers > 1 && (!config.databaseUrl || !config.brokerUrl)) {
    throw new Error(
      `WORKERS=${config.workers} needs DATABASE_URL (PostgreSQL) and BROKER_URL (Redis): processes share data and events only through them. ` +
        'Set both, or run with WORKERS=1.',
    );
  }
  if (config.brokerUrl && !config.databaseUrl) {
    throw new Error('BROKER_URL needs DATABASE_URL: the embedded database belongs to one process');
  }
}
