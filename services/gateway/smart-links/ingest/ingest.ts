import type { IncomingMessage, ServerResponse } from 'node:http';
import { QueueEvents } from 'bullmq';
import { pgTimestampToMillis } from '../../../../shared/calendar/dates';
import { AppError, notFound, tooManyRequests } from '../../../../shared/errors/app-error';
import { smartLinkJob, type SubmissionOutcomes } from '../../../../shared/queues/smart-link.job';
import { closeRedis, createRedis, type Redis } from '../../../../shared/queues/redis';
import type { AppContext } from '../../context';
import { type ErrorAnswer, errorAnswer } from '../../http/errors';
import { isPlatformKey, type PlatformKey } from '../../public/deliver';
import { beginRequest } from '../../http/request-context';
import { clientAddress, limitAddress, type TrustProxy } from '../../http/client-address';
import { consumePoint, rateLimitHeaders, sharedLimiter, type LimitVerdict, verdictHeaders } from '../../http/rate-limits';
import { openSecret } from '../../../../shared/webhooks/secrets';
import { findSmartLinkByKey, type IngestLink, type KeyedLink } from '../smart-links.repository';
import { type BodyProblem, parseFields, readBody } from './body';
import { verifyWebhook } from '../../../../shared/webhooks/signature';
import { acceptSubmission } from '../accept-submission';

const PATH = /^\/s\/([A-Za-z0-9]{1,64})(?:\/([a-z_0-9]{1,20}))?\/?(?:\?.*)?$/;
/** How long /s/{key}/{platform} waits for the event before answering 202 instead of 303. */
const PLATFORM_WAIT_MS = 10_000;

interface Ingest {
  /** True when this is a submission to handle here rather than in the Express app. */
  matches(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

/**
 * Smart links take submissions from any web page's script as well as from servers: every
 * answer may be read cross-origin (no cookies are involved, so `*`), with the headers a
 * sender acts on.
 */
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, Location',
} as const;

/** The answer to a browser's preflight: POST with the headers a sender may set, cached for a day. */
const PREFLIGHT = {
  ...CORS,
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'Content-Type, Idempotency-Key, webhook-id, webhook-timestamp, webhook-signature',
  'Access-Control-Max-Age': '86400',
  'Cache-Control': 'no-store',
  'Content-Length': '0',
} as const;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { ...headers, ...CORS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(payload), 'Cache-Control': 'no-store' });
  res.end(payload);
}

/**
 * A body refused before it was read (too large, or one that cannot be read): the answer,
 * then the connection is closed. Left open, the rest of the body would keep arriving for a
 * request already answered, and the server's request timeout would later write a second
 * answer (408) on the same connection.
 */
function refuseBody(req: IncomingMessage, res: ServerResponse, problem: BodyProblem): void {
  if (problem.status === 413) {
    res.shouldKeepAlive = false;
    res.on('finish', () => req.socket.destroySoon());
  }
  sendError(res, problem, problem.status === 413 ? { Connection: 'close' } : {});
}

/** An error answered as the Express app answers it (the same mapping, always JSON here). */
function sendError(res: ServerResponse, err: unknown, headers: Record<string, string> = {}): ErrorAnswer {
  const answer = errorAnswer(err);
  send(res, answer.status, answer.json, { ...answer.headers, ...headers });
  return answer;
}

const LINK_NOT_FOUND = () => notFound('Smart link');

/**
 * POST /s/{key}: the hottest path. It runs beside Express (plain node:http) to keep the
 * per-request work small, with the same request ids, log lines and error bodies:
 * link from the cache → per-link rate limit (the plan's) → body (64 KiB) → fields (joi) →
 * job added in a batch → 202 once Redis has stored it. A signed link checks its signature
 * before the rate limit instead (body → signature → limit), so only its sender's signed
 * requests spend its budget.
 */
export function createIngest(ctx: AppContext, opts: { trustProxy: TrustProxy }): Ingest {
  const { config, logger, caches } = ctx;
  // Per address, across every link: anyone who knows a signed link's URL can post to it, so
  // bad signatures are counted here rather than against the link. Touched only on a failure.
  const badSignatures = sharedLimiter(ctx.redis, {
    keyPrefix: `${config.queuePrefix}:rl:bad-signature`,
    points: config.smartLinkBadSignaturesPerMinute,
    durationSeconds: 60,
  });
  const producer = ctx.queues.producer(smartLinkJob);
  const accept = acceptSubmission(ctx);
  let queueEvents: QueueEvents | null = null;
  let queueEventsConnection: Redis | null = null;

  async function linkFor(key: string): Promise<KeyedLink | null> {
    const cached = caches.smartLinks.get(key);
    if (cached !== undefined) return cached || null;
    const startedAt = caches.smartLinks.begin();
    const row = await findSmartLinkByKey(ctx.db, key);
    caches.smartLinks.set(key, row ?? false, startedAt);
    return row ?? null;
  }

  function secretsOf(link: IngestLink, nowMs: number): string[] {
    const secrets = [openSecret(config.appKey, link.secret_enc)];
    if (link.previous_secret_enc && link.previous_secret_expires_at && pgTimestampToMillis(link.previous_secret_expires_at) > nowMs) {
      secrets.push(openSecret(config.appKey, link.previous_secret_enc));
    }
    return secrets;
  }

  async function receive(req: IncomingMessage, res: ServerResponse, requestId: string, key: string, platform: string | undefined): Promise<void> {
    const link = await linkFor(key);
    if (!link || !link.is_active || (platform !== undefined && !isPlatformKey(platform))) {
      req.resume();
      return void sendError(res, LINK_NOT_FOUND());
    }
    const limit = [{ scope: 'smart-link', key: link.id, perMinute: link.rate_per_minute }];
    let verdict: LimitVerdict | null;
    let raw: Buffer | BodyProblem;
    let nowMs: number;
    if (link.signed) {
      // Only a request that proves it comes from the link's sender is counted against the
      // link: unsigned traffic to a known URL must not use up the sender's budget. The HMAC
      // costs no round trip, so a valid request still makes one to Redis (the limit).
      raw = await readBody(req);
      if (!Buffer.isBuffer(raw)) return refuseBody(req, res, raw);
      nowMs = ctx.clock.now().getTime();
      if (!verifyWebhook(req.headers, raw, secretsOf(link, nowMs), nowMs)) return refuseSignature(req, res);
      verdict = await ctx.limits.take(limit);
    } else {
      // The limit check and the body read go on together: both wait on the network.
      [verdict, raw] = await Promise.all([ctx.limits.take(limit), readBody(req)]);
      nowMs = ctx.clock.now().getTime();
    }
    // A link of an unlimited plan is not counted at all (no verdict).
    if (verdict) verdictHeaders(res, verdict);
    if (verdict?.over) return void sendError(res, tooManyRequests(verdict.retryAfterSeconds));
    if (!Buffer.isBuffer(raw)) return refuseBody(req, res, raw);
    const parsed = await parseFields(req.headers['content-type'], raw);
    if (!parsed.ok) return void sendError(res, parsed.problem);

    const deliveryKey = req.headers['webhook-id'] ?? req.headers['idempotency-key'];
    const awaited = platform !== undefined && link.requires_approval === false;
    const queued = await accept(link, parsed.fields, { deliveryKey: typeof deliveryKey === 'string' ? deliveryKey : undefined, awaited, requestId, nowMs, bytes: raw.length });

    if (awaited) {
      const event = await waitForEvent(queued.jobId, queued.uid);
      if (event) {
        res.writeHead(303, { ...CORS, Location: `${config.publicBaseUrl}/e/${event}/${platform as PlatformKey}`, 'Cache-Control': 'no-store', 'Content-Length': 0 });
        res.end();
        return;
      }
    }
    send(res, 202, { data: { id: `sls_${queued.uid}`, status: 'queued' } });
  }

  /** 401 for a bad or missing signature, counted per address: 429 past the limit. */
  async function refuseSignature(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { state, over } = await consumePoint(badSignatures, limitAddress(clientAddress(req, opts.trustProxy)));
    rateLimitHeaders(res, config.smartLinkBadSignaturesPerMinute, state, over);
    sendError(res, over ? tooManyRequests() : new AppError('unauthenticated', 401, 'Invalid signature.'));
  }

  /** The uid of the submission's event once its job is done (null if it made none, or not within PLATFORM_WAIT_MS). */
  async function waitForEvent(jobId: string, uid: string): Promise<string | null> {
    if (!queueEvents) {
      queueEventsConnection = createRedis(config.redis, 'worker');
      queueEvents = new QueueEvents(smartLinkJob.queue, { connection: queueEventsConnection, prefix: config.queuePrefix });
      queueEvents.on('error', (err) => logger.debug({ err: err.message }, 'queue events error'));
    }
    try {
      // The event stream is read from its end once the connection is up: an event written
      // before then is not heard. Waiting for the connection keeps that window to the first
      // request's first moment, and the job itself is read again when no event came.
      await queueEvents.waitUntilReady();
      const job = await producer.queue.getJob(jobId);
      if (!job) return null;
      const outcomes = (await job.waitUntilFinished(queueEvents, PLATFORM_WAIT_MS).catch(async () => (await producer.queue.getJob(jobId))?.returnvalue)) as
        | SubmissionOutcomes
        | undefined;
      return outcomes?.[uid]?.event ?? null;
    } catch {
      return null;
    }
  }

  return {
    matches: (req) => (req.method === 'POST' || req.method === 'OPTIONS') && (req.url ?? '').startsWith('/s/'),
    handle(req, res) {
      const m = PATH.exec(req.url ?? '');
      const route = !m ? 'not_found' : m[2] === undefined ? '/s/:key' : '/s/:key/:platform';
      const method = req.method as 'POST' | 'OPTIONS';
      const requestId = beginRequest(logger, req, res, (seconds) => ctx.httpMetrics.observe(method, route, res.statusCode, seconds));
      if (method === 'OPTIONS' && m) {
        req.resume();
        res.writeHead(204, PREFLIGHT);
        res.end();
        return;
      }
      if (!m) {
        req.resume();
        sendError(res, LINK_NOT_FOUND());
        return;
      }
      receive(req, res, requestId, m[1], m[2]).catch((err: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (sendError(res, err).unexpected) logger.error({ err, reqId: requestId }, 'unhandled error in smart-link ingest');
      });
    },
    async close() {
      await queueEvents?.close();
      if (queueEventsConnection) await closeRedis(queueEventsConnection);
    },
  };
}
