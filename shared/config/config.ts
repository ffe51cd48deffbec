import Joi from 'joi';
import { parseNetworks } from '../net/networks';
import { compile as compileTrustedProxies } from 'proxy-addr';
import type { RedisTarget } from '../queues/redis';
import { trimEndOf } from '../text/trim';
import { parseMailbox } from './mailbox';

/**
 * Every setting the service reads, validated once at start. A bad setting lists every
 * problem and stops the process instead of failing later in the middle of a request.
 */
export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string;
  dbPoolMax: number;
  /** One server's URL, or a Redis Cluster's seed nodes (REDIS_CLUSTER=true). */
  redis: RedisTarget;
  queuePrefix: string;
  publicBaseUrl: string;
  appKey: string;
  appKeyIsDefault: boolean;
  smtpUrl: string | null;
  mailFrom: string;
  outboxDir: string;
  mail: MailSettings;
  /**
   * The domain whose MX reaches the inbound-mail service: invitations name
   * `reply+<token>@REPLY_DOMAIN` as their ORGANIZER (and envelope sender), so answers
   * from calendar apps and bounces come back to us. Null: the calendar's organizer.
   */
  replyDomain: string | null;
  inboundSmtp: InboundSmtpSettings;
  logLevel: string;
  shutdownTimeoutMs: number;
  /** Slow clients: a request's headers must arrive within this, or it is answered 408 and closed. */
  httpHeadersTimeoutMs: number;
  /** Slow clients: the whole request (headers and body) must arrive within this, or 408. */
  httpRequestTimeoutMs: number;
  /** Express's `trust proxy`: a hop count (all digits), addresses or subnet names, or false. */
  trustProxy: string | number | false;
  /** Count page views, adds to calendars, feed fetches and RSVPs (see docs/analytics.md). */
  analyticsEnabled: boolean;
  /** Who may make a team from the dashboard: anyone (`open`), nobody (`invite`: teams come from the admin CLI, people join by invitation), or `closed` (no sign-up and no invitations: the CLI only). */
  signup: 'open' | 'invite' | 'closed';
  /** Sign-in attempts (links asked for, links and passwords tried) one address may make in 10 minutes. */
  signInRatePer10Minutes: number;
  /** Webhook endpoints may be http:// (development); otherwise https only. */
  webhookAllowHttp: boolean;
  /** Networks webhooks may reach although they are not public (CIDR list; development and tests). */
  webhookAllowedNetworks: string;
  /** Bearer token for GET /metrics on every service; null: metrics are not served. */
  metricsToken: string | null;
  /** Password of the queue dashboard (/admin/queues); null: no dashboard. */
  adminToken: string | null;
  /** RSVP answers one address may send in 10 minutes (spam guard). */
  rsvpRatePer10Minutes: number;
  /** Subscribers one address may record in 10 minutes (beyond: sent on with the public feed, unrecorded). */
  subscribeRatePer10Minutes: number;
  /** Requests with a bad or missing signature one address may send to signed smart links per minute (401, then 429). */
  smartLinkBadSignaturesPerMinute: number;
  /** Anonymous reads (calendar pages, calendar feeds, event .ics files) one address may make per minute, across calendars (429 beyond). */
  publicReadRatePerMinute: number;
  /** Anonymous reads of one calendar (its page, its feed, its events' .ics files) per minute from every address together (429 beyond). */
  publicCalendarReadRatePerMinute: number;
  /** A worker's lock on a job; a job whose worker died is taken again after about this long. */
  workerLockMs: number;
  /** Smart-link submission records older than this many days are deleted; 0 keeps them for ever. */
  submissionRetentionDays: number;
  /** Minutes between a team's deletion and the purge of its rows. */
  teamPurgeDelayMinutes: number;
  /** Finished extractions (the text sent and its result) older than this many days are deleted; 0 keeps them. */
  extractionRetentionDays: number;
  /** Email delivery records of events over (or deleted) this many days ago are deleted; 0 keeps them. */
  deliveryRetentionDays: number;
  /** How often each mail worker sweeps for due email reminders; 0: this worker does not sweep. */
  reminderSweepMs: number;
  /** Due events one sweep handles at most (the rest: the next sweep, at once after it). */
  reminderSweepBatch: number;
  /** The optional model-based extractor; null: rules only (nothing leaves the machine). */
  extractLlm: ExtractLlmConfig | null;
  /** CPU time the rules may use on one text before its thread is stopped and the extraction fails (extraction_timeout). */
  extractTimeoutMs: number;
}

export interface ExtractLlmConfig {
  /** An OpenAI-compatible chat completions endpoint, e.g. http://127.0.0.1:11434/v1/chat/completions */
  url: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
}

/** The inbound-mail service's SMTP server (docs/email.md, "Replies"). */
interface InboundSmtpSettings {
  port: number;
  host: string;
  /** Largest message taken (SIZE extension; larger ones are refused). */
  maxBytes: number;
  /** Key and certificate files for STARTTLS; null: plain SMTP only. */
  tls: { keyFile: string; certFile: string } | null;
}

/** How the mail worker sends, and how mail jobs retry (the gateway stamps attempts and backoff on each job). */
interface MailSettings {
  /** SMTP connections each mail worker keeps open. */
  poolSize: number;
  /** Jobs (batches of messages) each mail worker works on at once. */
  concurrency: number;
  /** Messages per job: one fan-out is queued as jobs of this many messages (read by the gateway). */
  batchSize: number;
  /** Messages per second across every mail worker (a BullMQ rate limit); 0: no limit. */
  ratePerSecond: number;
  /** Tries per message for temporary failures (4xx replies, connection errors). */
  maxAttempts: number;
  /** Delay before the first retry, doubled for each one after. */
  backoffMs: number;
}

const DEV_APP_KEY = 'dev-only-app-key-change-me-0123456789abcdef';

const redisUrl = Joi.string().uri({ scheme: ['redis', 'rediss'] });
const redisUrls = (value: string) => value.split(',');

/**
 * The part of a key Redis Cluster hashes (the text inside the first `{…}`, when not empty),
 * or null when the prefix leaves that to what follows it.
 */
function hashTagOf(prefix: string): string | null {
  const open = prefix.indexOf('{');
  const close = open < 0 ? -1 : prefix.indexOf('}', open + 1);
  return close > open + 1 ? prefix.slice(open + 1, close) : null;
}

/** What a cluster's seed URLs must agree on: every node is connected with the same settings. */
const connectionOf = (url: URL) => `${url.protocol}//${url.username}:${url.password}`;

const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  HOST: Joi.string().default('0.0.0.0'),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://postgres:postgres@127.0.0.1:5432/calendar'),
  DB_POOL_MAX: Joi.number().integer().min(1).max(500).default(10),
  // One URL, or for a Redis Cluster several seed nodes, comma-separated.
  REDIS_URL: Joi.string()
    .custom((value: string, helpers) => (redisUrls(value).every((url) => !redisUrl.validate(url).error) ? value : helpers.error('redis.url')))
    .messages({ 'redis.url': '{{#label}} must be a redis:// or rediss:// URL, or with REDIS_CLUSTER=true several, comma-separated' })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: Joi.boolean().default(false),
  // Redis Cluster needs every key of a queue in one slot: the braces make the prefix a hash tag.
  QUEUE_PREFIX: Joi.string().pattern(/^[A-Za-z0-9{}_-]+$/).default('{cal}'),
  PUBLIC_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  APP_KEY: Joi.string().min(32),
  SMTP_URL: Joi.string().uri({ scheme: ['smtp', 'smtps'] }),
  MAIL_FROM: Joi.string().default('Calendar <no-reply@localhost>'),
  OUTBOX_DIR: Joi.string().default('outbox'),
  MAIL_POOL_SIZE: Joi.number().integer().min(1).max(100).default(5),
  MAIL_CONCURRENCY: Joi.number().integer().min(1).max(100).default(4),
  MAIL_BATCH_SIZE: Joi.number().integer().min(1).max(100).default(10),
  MAIL_RATE_PER_SECOND: Joi.number().integer().min(0).max(100000).default(100),
  MAIL_MAX_ATTEMPTS: Joi.number().integer().min(1).max(50).default(10),
  MAIL_BACKOFF_MS: Joi.number().integer().min(1).max(86400000).default(30000),
  REPLY_DOMAIN: Joi.string().hostname().lowercase(),
  INBOUND_SMTP_PORT: Joi.number().integer().min(0).max(65535).default(2525),
  INBOUND_SMTP_HOST: Joi.string().default('0.0.0.0'),
  INBOUND_MAX_BYTES: Joi.number().integer().min(10_000).max(50_000_000).default(2_000_000),
  INBOUND_TLS_KEY_FILE: Joi.string(),
  INBOUND_TLS_CERT_FILE: Joi.string(),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(100).max(600000).default(10000),
  HTTP_HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).max(3_600_000).default(30_000),
  TRUST_PROXY: Joi.string().allow('').default(''),
  WEBHOOK_ALLOW_HTTP: Joi.boolean().default(false),
  ANALYTICS_ENABLED: Joi.boolean().default(true),
  SIGNUP: Joi.string().valid('open', 'invite', 'closed').default('invite'),
  SIGN_IN_RATE_PER_10_MINUTES: Joi.number().integer().min(1).max(1_000_000).default(20),
  WEBHOOK_ALLOWED_NETWORKS: Joi.string().allow('').default(''),
  RSVP_RATE_PER_10_MINUTES: Joi.number().integer().min(1).max(1_000_000).default(20),
  SUBSCRIBE_RATE_PER_10_MINUTES: Joi.number().integer().min(1).max(1_000_000).default(20),
  SMART_LINK_BAD_SIGNATURES_PER_MINUTE: Joi.number().integer().min(1).max(1_000_000).default(120),
  PUBLIC_READ_RATE_PER_MINUTE: Joi.number().integer().min(1).max(1_000_000).default(300),
  PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: Joi.number().integer().min(1).max(1_000_000).default(6000),
  METRICS_TOKEN: Joi.string().min(16).max(200).pattern(/^\S+$/),
  ADMIN_TOKEN: Joi.string().min(16).max(200).pattern(/^\S+$/),
  WORKER_LOCK_MS: Joi.number().integer().min(1000).max(600_000).default(30_000),
  SUBMISSION_RETENTION_DAYS: Joi.number().integer().min(0).max(36_500).default(90),
  TEAM_PURGE_DELAY_MINUTES: Joi.number().integer().min(0).max(43_200).default(60),
  EXTRACTION_RETENTION_DAYS: Joi.number().integer().min(0).max(36_500).default(30),
  DELIVERY_RETENTION_DAYS: Joi.number().integer().min(0).max(36_500).default(365),
  REMINDER_SWEEP_MS: Joi.number().integer().min(0).max(3_600_000).default(60_000),
  REMINDER_SWEEP_BATCH: Joi.number().integer().min(1).max(10_000).default(200),
  EXTRACT_LLM_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  EXTRACT_LLM_MODEL: Joi.string().max(200).default('gpt-4o-mini'),
  EXTRACT_LLM_API_KEY: Joi.string().max(500),
  EXTRACT_LLM_TIMEOUT_MS: Joi.number().integer().min(100).max(60000).default(8000),
  EXTRACT_TIMEOUT_MS: Joi.number().integer().min(1).max(60_000).default(1000),
})
  .unknown(true);

/**
 * What the schema cannot say on its own: rules across settings, and values only a parser
 * can judge. Each check runs only when every setting it reads passed the schema, so a bad
 * value is reported once, by the schema, and never hides another setting's problem.
 */
interface Check {
  settings: string[];
  problem(env: Record<string, unknown>): string | undefined;
}

const CHECKS: Check[] = [
  {
    settings: ['NODE_ENV', 'APP_KEY'],
    problem: (env) => (env.NODE_ENV === 'production' && !env.APP_KEY ? 'APP_KEY is required when NODE_ENV=production' : undefined),
  },
  {
    // Node refuses a headers timeout longer than the request timeout that contains it.
    settings: ['HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS'],
    problem: (env) =>
      (env.HTTP_HEADERS_TIMEOUT_MS as number) > (env.HTTP_REQUEST_TIMEOUT_MS as number)
        ? 'HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS'
        : undefined,
  },
  {
    // Express compiles `trust proxy` only when the gateway starts, and a bad entry would
    // crash it there with a stack trace: compile it here, as Express does.
    settings: ['TRUST_PROXY'],
    problem: (env) => {
      const trust = readTrustProxy(env.TRUST_PROXY as string);
      if (typeof trust !== 'string') return undefined;
      try {
        compileTrustedProxies(trust.split(',').map((entry) => entry.trim()));
        return undefined;
      } catch (err) {
        return `TRUST_PROXY must be a number of proxy hops, or addresses, subnets and loopback/linklocal/uniquelocal, comma-separated (${(err as Error).message})`;
      }
    },
  },
  {
    settings: ['WEBHOOK_ALLOWED_NETWORKS'],
    problem: (env) => {
      try {
        parseNetworks(env.WEBHOOK_ALLOWED_NETWORKS as string);
        return undefined;
      } catch (err) {
        return `WEBHOOK_ALLOWED_NETWORKS must be addresses or CIDR ranges, comma-separated (${(err as Error).message})`;
      }
    },
  },
  {
    settings: ['REDIS_URL', 'REDIS_CLUSTER'],
    problem: (env) =>
      !env.REDIS_CLUSTER && redisUrls(env.REDIS_URL as string).length > 1
        ? 'REDIS_URL lists several servers: set REDIS_CLUSTER=true if they are seed nodes of a Redis Cluster (one server takes one URL)'
        : undefined,
  },
  {
    settings: ['REDIS_URL', 'REDIS_CLUSTER'],
    problem: (env) => {
      if (!env.REDIS_CLUSTER) return undefined;
      const urls = redisUrls(env.REDIS_URL as string).map((url) => new URL(url));
      if (new Set(urls.map(connectionOf)).size > 1) return 'REDIS_URL: the seed nodes of a Redis Cluster must share scheme, user and password (every node is connected with the same)';
      if (urls.some((url) => !['', '/', '/0'].includes(url.pathname))) return 'REDIS_URL: a Redis Cluster has database 0 only; leave the database number out';
      return undefined;
    },
  },
  {
    // BullMQ's scripts and the pipelines touch several keys of a queue at once, which a
    // cluster allows only within one slot (else CROSSSLOT): the prefix must fix the slot.
    settings: ['REDIS_CLUSTER', 'QUEUE_PREFIX'],
    problem: (env) =>
      env.REDIS_CLUSTER && hashTagOf(env.QUEUE_PREFIX as string) === null
        ? 'QUEUE_PREFIX must hold a Redis Cluster hash tag when REDIS_CLUSTER=true, e.g. {cal} or {cal-staging}: the text in braces puts every key in one slot'
        : undefined,
  },
  {
    settings: ['INBOUND_TLS_KEY_FILE', 'INBOUND_TLS_CERT_FILE'],
    problem: (env) =>
      (env.INBOUND_TLS_KEY_FILE === undefined) !== (env.INBOUND_TLS_CERT_FILE === undefined)
        ? 'INBOUND_TLS_KEY_FILE and INBOUND_TLS_CERT_FILE go together: set both for STARTTLS, or neither'
        : undefined,
  },
  {
    settings: ['REMINDER_SWEEP_MS'],
    problem: (env) =>
      Number(env.REMINDER_SWEEP_MS) > 0 && Number(env.REMINDER_SWEEP_MS) < 100 ? 'REMINDER_SWEEP_MS must be 0 (no sweep in this worker) or at least 100' : undefined,
  },
  {
    settings: ['MAIL_FROM'],
    problem: (env) => (parseMailbox(env.MAIL_FROM as string) ? undefined : 'MAIL_FROM must be an address, e.g. "Calendar <no-reply@example.com>"'),
  },
];

/**
 * Express reads the text '1' as an address (0.0.0.1), not one hop: only a number is a hop
 * count, and without it every client seems to come from the load balancer, so each
 * per-address limit would be one limit for everybody.
 */
function readTrustProxy(text: string): string | number | false {
  if (text === '') return false;
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** Every setting the services read (the environment variables of docs/configuration.md). */
export const CONFIG_SETTINGS: string[] = Object.keys((schema.describe() as { keys: Record<string, unknown> }).keys);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') clean[key] = value;
  }
  const { error, value } = schema.validate(clean, { abortEarly: false, convert: true });
  const details = error?.details ?? [];
  const failed = new Set(details.map((d) => String(d.path[0])));
  const problems = [
    ...details.map((d) => (d.context?.key ? `${d.context.key}: ${d.message}` : d.message)),
    ...CHECKS.filter((c) => !c.settings.some((key) => failed.has(key)))
      .map((c) => c.problem(value))
      .filter((p): p is string => p !== undefined),
  ];
  if (problems.length) throw new ConfigError(problems);
  const port = value.PORT as number;
  const baseUrl = (value.PUBLIC_BASE_URL as string | undefined) ?? `http://localhost:${port}`;
  return {
    nodeEnv: value.NODE_ENV,
    port,
    host: value.HOST,
    databaseUrl: value.DATABASE_URL,
    dbPoolMax: value.DB_POOL_MAX,
    redis: value.REDIS_CLUSTER ? { cluster: redisUrls(value.REDIS_URL) } : value.REDIS_URL,
    queuePrefix: value.QUEUE_PREFIX,
    publicBaseUrl: trimEndOf(baseUrl, /\//),
    appKey: value.APP_KEY ?? DEV_APP_KEY,
    appKeyIsDefault: !value.APP_KEY,
    smtpUrl: value.SMTP_URL ?? null,
    mailFrom: value.MAIL_FROM,
    outboxDir: value.OUTBOX_DIR,
    mail: {
      poolSize: value.MAIL_POOL_SIZE,
      concurrency: value.MAIL_CONCURRENCY,
      batchSize: value.MAIL_BATCH_SIZE,
      ratePerSecond: value.MAIL_RATE_PER_SECOND,
      maxAttempts: value.MAIL_MAX_ATTEMPTS,
      backoffMs: value.MAIL_BACKOFF_MS,
    },
    replyDomain: value.REPLY_DOMAIN ?? null,
    inboundSmtp: {
      port: value.INBOUND_SMTP_PORT,
      host: value.INBOUND_SMTP_HOST,
      maxBytes: value.INBOUND_MAX_BYTES,
      tls: value.INBOUND_TLS_KEY_FILE ? { keyFile: value.INBOUND_TLS_KEY_FILE, certFile: value.INBOUND_TLS_CERT_FILE } : null,
    },
    logLevel: value.LOG_LEVEL,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
    httpHeadersTimeoutMs: value.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: value.HTTP_REQUEST_TIMEOUT_MS,
    trustProxy: readTrustProxy(value.TRUST_PROXY),
    webhookAllowHttp: value.WEBHOOK_ALLOW_HTTP,
    analyticsEnabled: value.ANALYTICS_ENABLED,
    signup: value.SIGNUP,
    signInRatePer10Minutes: value.SIGN_IN_RATE_PER_10_MINUTES,
    webhookAllowedNetworks: value.WEBHOOK_ALLOWED_NETWORKS,
    workerLockMs: value.WORKER_LOCK_MS,
    submissionRetentionDays: value.SUBMISSION_RETENTION_DAYS,
    teamPurgeDelayMinutes: value.TEAM_PURGE_DELAY_MINUTES,
    extractionRetentionDays: value.EXTRACTION_RETENTION_DAYS,
    deliveryRetentionDays: value.DELIVERY_RETENTION_DAYS,
    reminderSweepMs: value.REMINDER_SWEEP_MS,
    reminderSweepBatch: value.REMINDER_SWEEP_BATCH,
    metricsToken: value.METRICS_TOKEN ?? null,
    adminToken: value.ADMIN_TOKEN ?? null,
    rsvpRatePer10Minutes: value.RSVP_RATE_PER_10_MINUTES,
    subscribeRatePer10Minutes: value.SUBSCRIBE_RATE_PER_10_MINUTES,
    smartLinkBadSignaturesPerMinute: value.SMART_LINK_BAD_SIGNATURES_PER_MINUTE,
    publicReadRatePerMinute: value.PUBLIC_READ_RATE_PER_MINUTE,
    publicCalendarReadRatePerMinute: value.PUBLIC_CALENDAR_READ_RATE_PER_MINUTE,
    extractLlm: value.EXTRACT_LLM_URL
      ? { url: value.EXTRACT_LLM_URL, model: value.EXTRACT_LLM_MODEL, apiKey: value.EXTRACT_LLM_API_KEY ?? null, timeoutMs: value.EXTRACT_LLM_TIMEOUT_MS }
      : null,
    extractTimeoutMs: value.EXTRACT_TIMEOUT_MS,
  };
}

/** For process entry points: prints every problem and exits non-zero. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
