import type { Knex } from '../../shared/db/knex';
import { deploymentOf } from '../../shared/db/deployment';
import { startRetention, WEBHOOK_RECORDS } from '../../shared/db/retention';
import { parseNetworks, postGuarded } from '../../shared/net/outbound';
import { Producer } from '../../shared/queues/queues';
import { type WebhookJob, webhookJob, WEBHOOK_JOB_DELIVERIES } from '../../shared/queues/webhook.job';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { type AccountMailJob, accountMailJob, newAccountMailJobId } from '../../shared/queues/account-mail.job';
import { openSecret } from '../../shared/webhooks/secrets';
import { signPayload } from '../../shared/webhooks/signature';
import { EndpointTurns } from './endpoint-turns';

/** Waits after each failed attempt (the 1st to the 7th); the 8th failure is the last. */
const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000];
/** An endpoint's answer, whole, within this. */
const TIMEOUT_MS = 15_000;
/** The start of an answer kept with its attempt. */
const KEEP_BYTES = 2048;
/** Attempts at once to one endpoint (its origin), per worker process: a slow one holds only these. */
const PER_ENDPOINT = 4;
/** Jobs sending to one endpoint at once, per worker process: another gives its place up (postponed a second). */
const JOBS_PER_ENDPOINT = 4;
/**
 * An attempt waits for its endpoint's turn while the endpoint frees one at least this often
 * (a fast endpoint frees one within milliseconds); else it gives its place up (postponed a second).
 */
const TURN_STALL_MS = 250;
/** An endpoint that failed every attempt for this long is turned off. */
const DISABLE_AFTER = '5 days';
const RELAY_EVERY_MS = 500;
/** Due deliveries looked at per relay, oldest first. */
const RELAY_SCAN = 2000;
/** Deliveries of one webhook relayed and not yet done, at most. */
const IN_FLIGHT_PER_WEBHOOK = 800;
/** Jobs waiting in the queue beyond which the relay waits for the next tick. */
const RELAY_BACKLOG = 200;
/** A relayed delivery whose job has not run after this is relayed again (its job was lost with Redis). */
const RELAY_AGAIN_AFTER = '2 minutes';
/** The longest Retry-After honoured. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

interface Due {
  id: number;
  uid: string;
  webhook_id: number;
  message_id: number;
  resource: string;
  status: string;
  attempts: number;
  relays: number;
  message_uid: string;
  type: string;
  payload: unknown;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_valid: boolean;
  is_active: boolean;
  deleted: boolean;
  /** An earlier message about the same resource, pending and not in this job: this one waits for it. */
  blocked_until: string | null;
}

/** What became of one delivery of a job, recorded with the others in one transaction. */
type Result =
  | { d: Due; kind: 'attempt'; outcome: 'succeeded' | 'retry' | 'failed'; status: number | null; body: string | null; error: string | null; durationMs: number; delayMs: number }
  | { d: Due; kind: 'drop'; error: string }
  | { d: Due; kind: 'wait'; ms: number; after?: string | null };

/**
 * Secrets opened (a key derivation and a decipher each), by their sealed text: a seal is one
 * secret for good (a new secret is a new seal, with a random IV). A failure to open one is
 * not kept: the attempt fails with it as before.
 */
const opened = new Map<string, { appKey: string; secret: string }>();
const OPENED_MAX = 1000;

function openCached(appKey: string, sealed: string): string {
  const known = opened.get(sealed);
  if (known?.appKey === appKey) return known.secret;
  const secret = openSecret(appKey, sealed);
  if (opened.size >= OPENED_MAX) opened.clear();
  opened.set(sealed, { appKey, secret });
  return secret;
}

/** What every attempt of a job to one webhook shares: its address, parsed once, and its sealed secrets. */
interface Endpoint {
  url: URL;
  origin: string;
  sealed: string[];
  /** No turn came for this job: the rest of its deliveries there wait. */
  stalled: boolean;
}

function endpointOf(d: Due): Endpoint {
  const url = new URL(d.url);
  return { url, origin: url.origin, sealed: [d.secret_enc, ...(d.previous_valid && d.previous_secret_enc ? [d.previous_secret_enc] : [])], stalled: false };
}

/** Seconds or an HTTP date, as milliseconds from now; null when absent or unreadable. */
function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d{1,9}$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * The webhooks queue's worker, and the relay that feeds it from the outbox: due deliveries
 * are claimed from Postgres (several workers share them) and queued, up to 200 of one
 * webhook per job; a job makes each one's signed attempt (in order per resource, at most 4
 * at once per endpoint, the oldest job's first) and records them all at once. See
 * docs/webhooks.md.
 */
export function webhookWorker(ctx: WorkerContext): WorkerDefinition<WebhookJob, number> {
  const { db, config, logger } = ctx;
  const allowed = parseNetworks(config.webhookAllowedNetworks);
  const producer = new Producer(webhookJob, ctx.redis, config.queuePrefix, logger, deploymentOf(db));
  const notices = new Producer(accountMailJob, ctx.redis, config.queuePrefix, logger, deploymentOf(db));
  const turns = new EndpointTurns(PER_ENDPOINT, JOBS_PER_ENDPOINT, TURN_STALL_MS);
  /** Jobs started by this process: a job's rank for its endpoint's turns (older first). */
  let jobsStarted = 0;
  const retention = startRetention(ctx, WEBHOOK_RECORDS, config.deliveryRetentionDays);

  /**
   * Deliveries this process's jobs have sent and are recording: out of flight for the relay,
   * which claims the next ones meanwhile (the jobs sending to an endpoint then do not run out
   * while one records).
   */
  const recording = new Set<number>();
  let relaying: Promise<void> | null = null;
  const relay = async (): Promise<void> => {
    // The queue holds what the workers will take soon, not the whole outbox: Redis stays small
    // and no job waits there long enough to be relayed again. Each webhook has at most
    // IN_FLIGHT_PER_WEBHOOK deliveries relayed and not yet done, so one busy endpoint's
    // backlog never fills the queue ahead of the others'.
    if ((await producer.queue.getWaitingCount()) >= RELAY_BACKLOG) return;
    // Claimed only if still due and unclaimed: a relay in another worker that took a row
    // first makes this one's condition false once its lock is released. (The ids as an array:
    // a plain IN had the planner scan the whole table.)
    const { rows } = await db.raw(
      `WITH in_flight AS (
         SELECT webhook_id, count(*) AS n FROM webhook_deliveries
          WHERE status = 'pending' AND relayed_at IS NOT NULL AND relayed_at >= now() - interval '${RELAY_AGAIN_AFTER}'
            AND id <> ALL (?::bigint[])
          GROUP BY webhook_id),
       due AS (
         SELECT id, webhook_id, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, id) AS rank
           FROM (SELECT id, webhook_id, next_attempt_at FROM webhook_deliveries
                  WHERE status = 'pending' AND next_attempt_at <= now()
                    AND (relayed_at IS NULL OR relayed_at < now() - interval '${RELAY_AGAIN_AFTER}')
                  ORDER BY next_attempt_at LIMIT ${RELAY_SCAN}) AS oldest),
       picked AS (
         SELECT due.id FROM due LEFT JOIN in_flight USING (webhook_id)
          WHERE due.rank + coalesce(in_flight.n, 0) <= ${IN_FLIGHT_PER_WEBHOOK})
       UPDATE webhook_deliveries SET relayed_at = now(), relays = relays + 1
        WHERE id = ANY (ARRAY(SELECT id FROM picked)) AND status = 'pending' AND next_attempt_at <= now()
          AND (relayed_at IS NULL OR relayed_at < now() - interval '${RELAY_AGAIN_AFTER}')
        RETURNING uid, relays, webhook_id, message_id`,
      [`{${[...recording].join(',')}}`],
    );
    const due = (rows as Array<{ uid: string; relays: number; webhook_id: number; message_id: number }>).sort((a, b) => a.message_id - b.message_id);
    if (!due.length) return;
    const byWebhook = new Map<number, typeof due>();
    for (const d of due) {
      const list = byWebhook.get(d.webhook_id);
      if (list) list.push(d);
      else byWebhook.set(d.webhook_id, [d]);
    }
    const jobs = [...byWebhook.values()].flatMap((list) =>
      Array.from({ length: Math.ceil(list.length / WEBHOOK_JOB_DELIVERIES) }, (_, i) => list.slice(i * WEBHOOK_JOB_DELIVERIES, (i + 1) * WEBHOOK_JOB_DELIVERIES)),
    );
    await producer.addBulk(
      jobs.map((list) => ({ name: 'deliver', data: { deliveries: list.map((d) => ({ delivery: d.uid, relay: d.relays })) }, opts: { jobId: `${list[0].uid}-${list[0].relays}` } })),
    );
  };
  /**
   * Relays now, or right after the relay under way (a job done meanwhile made room it did not
   * see); at the start, every tick, and as soon as a job has sent its deliveries and again
   * once it has recorded them (its webhook has room again).
   */
  let again = false;
  const relaySoon = () => {
    if (relaying) {
      again = true;
      return;
    }
    relaying = relay()
      .catch((err) => logger.warn({ err: (err as Error).message }, 'could not relay webhook deliveries; trying again'))
      .finally(() => {
        relaying = null;
        if (again && !closing) {
          again = false;
          relaySoon();
        }
      });
  };
  let closing = false;
  const timer = setInterval(relaySoon, RELAY_EVERY_MS);
  relaySoon();

  return {
    contract: webhookJob,
    concurrency: 16,
    process: async (job, c, log) => {
      const results = await deliverAll(c.db, job.data, { allowed, turns, appKey: config.appKey, rank: ++jobsStarted });
      for (const r of results) recording.add(r.d.id);
      if (results.length) relaySoon();
      let recorded: number;
      try {
        recorded = await record(c.db, results, notices);
      } finally {
        for (const r of results) recording.delete(r.d.id);
      }
      log.info({ deliveries: job.data.deliveries.length, attempts: results.filter((r) => r.kind === 'attempt').length, recorded }, 'webhook deliveries');
      relaySoon();
      return recorded;
    },
    close: async () => {
      closing = true;
      clearInterval(timer);
      await retention.stop();
      while (relaying) await relaying;
      await producer.close();
      await notices.close();
    },
  };
}

/** The job's deliveries still as they were relayed, with what sending them needs, in message order. */
async function load(db: Knex, job: WebhookJob): Promise<Due[]> {
  const uids = job.deliveries.map((d) => d.delivery);
  const { rows } = await db.raw(
    `SELECT d.id, d.uid, d.webhook_id, d.message_id, d.resource, d.status, d.attempts, d.relays,
            m.uid AS message_uid, m.type, m.payload,
            w.url, w.secret_enc, w.previous_secret_enc, coalesce(w.previous_secret_expires_at > now(), false) AS previous_valid,
            w.is_active, w.deleted_at IS NOT NULL AS deleted,
            (SELECT max(e.next_attempt_at) FROM webhook_deliveries e
              WHERE e.webhook_id = d.webhook_id AND e.resource = d.resource AND e.status = 'pending'
                AND e.message_id < d.message_id AND e.uid <> ALL (:uids)) AS blocked_until
       FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.uid = ANY (:uids)
      ORDER BY d.message_id`,
    { uids },
  );
  const relays = new Map(job.deliveries.map((d) => [d.delivery, d.relay]));
  return (rows as Due[]).filter((d) => d.status === 'pending' && relays.get(d.uid) === d.relays);
}

/**
 * Sends the job's deliveries: those about one resource one after the other, in order (one
 * that is to be tried again holds the ones after it), the resources side by side as the
 * endpoint's turns allow.
 */
async function deliverAll(db: Knex, job: WebhookJob, opts: { allowed: ReturnType<typeof parseNetworks>; turns: EndpointTurns; appKey: string; rank: number }): Promise<Result[]> {
  const results: Result[] = [];
  const chains = new Map<string, Due[]>();
  for (const d of await load(db, job)) {
    if (d.deleted || (!d.is_active && d.type !== 'webhook.test')) results.push({ d, kind: 'drop', error: d.deleted ? 'the webhook was deleted' : 'the webhook is turned off' });
    // Behind an earlier message about it: looked at again a second after that one's next attempt.
    else if (d.blocked_until) results.push({ d, kind: 'wait', ms: 1000, after: d.blocked_until });
    else {
      const chain = chains.get(d.resource);
      if (chain) chain.push(d);
      else chains.set(d.resource, [d]);
    }
  }
  // The job's deliveries all go to one endpoint: PER_ENDPOINT chains at a time.
  const queue = [...chains.values()];
  const endpoints = new Map<number, Endpoint>();
  const joined = new Set<string>();
  /** The endpoint of a delivery; null when it has no room for this job now, or stalled. */
  const endpoint = (d: Due): Endpoint | null => {
    let e = endpoints.get(d.webhook_id);
    if (!e) endpoints.set(d.webhook_id, (e = endpointOf(d)));
    if (e.stalled) return null;
    if (!joined.has(e.origin)) {
      if (!opts.turns.join(e.origin, opts.rank)) e.stalled = true;
      else joined.add(e.origin);
    }
    return e.stalled ? null : e;
  };
  const runChain = async (chain: Due[]) => {
      for (const [i, d] of chain.entries()) {
        const to = endpoint(d);
        // No turn: this and the rest of the chain are looked at again in a second, and so is
        // the rest of the job's to that endpoint, without waiting for turns again.
        if (!to || !(await opts.turns.take(to.origin, opts.rank))) {
          if (to) to.stalled = true;
          for (const rest of chain.slice(i)) results.push({ d: rest, kind: 'wait', ms: 1000 });
          return;
        }
        let result: Result;
        try {
          result = await attempt(d, to, opts.allowed, opts.appKey);
        } finally {
          opts.turns.give(to.origin);
        }
        results.push(result);
        if (result.kind === 'attempt' && result.outcome === 'retry') {
          for (const rest of chain.slice(i + 1)) results.push({ d: rest, kind: 'wait', ms: result.delayMs + 1000 });
          return;
        }
      }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(PER_ENDPOINT, queue.length) }, async () => {
        for (let chain = queue.shift(); chain; chain = queue.shift()) await runChain(chain);
      }),
    );
  } finally {
    for (const origin of joined) opts.turns.leave(origin, opts.rank);
  }
  return results;
}

/** One signed POST and what it means for the delivery. */
async function attempt(d: Due, to: Endpoint, allowed: ReturnType<typeof parseNetworks>, appKey: string): Promise<Result> {
  const number = d.attempts + 1;
  const started = Date.now();
  let status: number | null = null;
  let body: string | null = null;
  let error: string | null = null;
  let waitMs: number | null = null;
  let blocked = false;
  try {
    const text = JSON.stringify(d.payload);
    const id = `msg_${d.message_uid}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const signatures = to.sealed.map((sealed) => signPayload(openCached(appKey, sealed), id, timestamp, text));
    const answer = await postGuarded(
      to.url,
      text,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'calendar-service-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
      },
      { timeoutMs: TIMEOUT_MS, allowed, keepBytes: KEEP_BYTES },
    );
    status = answer.status;
    body = answer.body;
    waitMs = retryAfterMs(answer.headers['retry-after'], Date.now());
  } catch (err) {
    blocked = (err as NodeJS.ErrnoException).code === 'EADDRBLOCKED';
    error = blocked ? (err as Error).message : `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${(err as Error).message}`;
  }
  const succeeded = status !== null && status >= 200 && status < 300;
  // Tried again: no answer (timeout, connection), 429 and 5xx. Not: other answers, a refused address.
  const retryable = !succeeded && !blocked && (status === null || status === 429 || status >= 500);
  const outcome = succeeded ? 'succeeded' : retryable && number <= RETRY_SCHEDULE_MS.length ? 'retry' : 'failed';
  const delayMs = outcome === 'retry' ? Math.min(MAX_RETRY_AFTER_MS, waitMs !== null ? Math.max(waitMs, 1000) : RETRY_SCHEDULE_MS[number - 1]) : 0;
  return { d, kind: 'attempt', outcome, status, body, error, durationMs: Date.now() - started, delayMs };
}

/**
 * Records a job's results, atomically. Each row is changed only from the state its job
 * started from (pending, the same relay): a delivery changed meanwhile (retried through the
 * API, relayed again) keeps its new state, and an attempt on it is not recorded. One
 * statement records the attempts, drops and waits, lets the next message about each resource
 * finished go, and clears the webhook's failing mark on a success; a job without a success
 * runs it in a transaction with the statement that may turn the webhook off.
 */
async function record(db: Knex, results: Result[], notices: Producer<AccountMailJob>): Promise<number> {
  if (!results.length) return 0;
  const attempts = results.filter((r): r is Extract<Result, { kind: 'attempt' }> => r.kind === 'attempt');
  const drops = results.filter((r): r is Extract<Result, { kind: 'drop' }> => r.kind === 'drop');
  const waits = results.filter((r): r is Extract<Result, { kind: 'wait' }> => r.kind === 'wait');
  const webhookId = results[0].d.webhook_id;
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const recordAll = async (q: Knex): Promise<Array<{ id: number; status: string }>> => {
    const { rows } = await q.raw(
      `WITH r AS (SELECT * FROM json_to_recordset(?::json) AS r(id bigint, relays int, status text, attempt int, delay_ms bigint, code int, body text, error text, duration_ms int)),
       updated AS (
         UPDATE webhook_deliveries d
            SET status = CASE WHEN r.status = 'retry' THEN 'pending' ELSE r.status END, attempts = r.attempt,
                next_attempt_at = CASE WHEN r.status = 'retry' THEN now() + r.delay_ms * interval '1 millisecond' END,
                relayed_at = NULL, last_status_code = r.code, last_error = r.error, updated_at = now()
           FROM r WHERE d.id = r.id AND d.status = 'pending' AND d.relays = r.relays
         RETURNING d.id),
       inserted AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, status_code, duration_ms, response_body, error)
         SELECT r.id, r.attempt, r.code, r.duration_ms, r.body, r.error FROM r JOIN updated ON updated.id = r.id
         RETURNING delivery_id),
       dropped AS (
         UPDATE webhook_deliveries d SET status = 'failed', last_error = r.error, next_attempt_at = NULL, updated_at = now()
           FROM json_to_recordset(?::json) AS r(id bigint, relays int, error text)
          WHERE d.id = r.id AND d.status = 'pending' AND d.relays = r.relays),
       waited AS (
         UPDATE webhook_deliveries d SET next_attempt_at = greatest(coalesce(r.after, now()), now()) + r.ms * interval '1 millisecond', relayed_at = NULL, updated_at = now()
           FROM json_to_recordset(?::json) AS r(id bigint, relays int, ms bigint, after timestamptz)
          WHERE d.id = r.id AND d.status = 'pending' AND d.relays = r.relays),
       -- A resource whose last message here is done (an attempt recorded and not to be tried
       -- again, or dropped): the next one about it, waiting, may go now (one relayed already
       -- is on its way: touching it would have it relayed and sent twice).
       finished AS (
         SELECT f.webhook_id, f.resource, f.message_id FROM json_to_recordset(?::json) AS f(id bigint, webhook_id bigint, resource text, message_id bigint, dropped boolean)
          WHERE f.dropped OR f.id IN (SELECT delivery_id FROM inserted)),
       released AS (
         UPDATE webhook_deliveries SET next_attempt_at = now(), relayed_at = NULL
          WHERE id IN (SELECT DISTINCT ON (e.webhook_id, e.resource) e.id
                         FROM webhook_deliveries e JOIN finished r
                           ON e.webhook_id = r.webhook_id AND e.resource = r.resource AND e.message_id > r.message_id
                        WHERE e.status = 'pending' AND e.relayed_at IS NULL AND e.id <> ALL (?::bigint[])
                        ORDER BY e.webhook_id, e.resource, e.message_id)),
       -- The endpoint answers: it is not failing.
       answering AS (
         UPDATE webhooks SET failing_since = NULL
          WHERE id = ? AND failing_since IS NOT NULL
            AND EXISTS (SELECT 1 FROM inserted JOIN r ON r.id = inserted.delivery_id WHERE r.status = 'succeeded'))
       SELECT inserted.delivery_id AS id, r.status FROM inserted JOIN r ON r.id = inserted.delivery_id`,
      [
        json(
          attempts.map((a) => ({ id: a.d.id, relays: a.d.relays, status: a.outcome, attempt: a.d.attempts + 1, delay_ms: a.delayMs, code: a.status, body: a.body, error: a.error, duration_ms: a.durationMs })),
        ),
        json(drops.map((r) => ({ id: r.d.id, relays: r.d.relays, error: r.error }))),
        json(waits.map((r) => ({ id: r.d.id, relays: r.d.relays, ms: r.ms, after: r.after ?? null }))),
        json([
          ...attempts.filter((a) => a.outcome !== 'retry').map((a) => ({ id: a.d.id, webhook_id: a.d.webhook_id, resource: a.d.resource, message_id: a.d.message_id, dropped: false })),
          ...drops.map((r) => ({ id: r.d.id, webhook_id: r.d.webhook_id, resource: r.d.resource, message_id: r.d.message_id, dropped: true })),
        ]),
        `{${results.map((r) => r.d.id).join(',')}}`,
        webhookId,
      ],
    );
    return (rows as Array<{ id: string | number; status: string }>).map((r) => ({ id: Number(r.id), status: r.status }));
  };
  /** With only failures recorded, the webhook may be turned off (its team's admins told, in the same transaction). */
  const failing = async (trx: Knex, recorded: Array<{ id: number; status: string }>): Promise<void> => {
    const ids = new Set(recorded.map((r) => r.id));
    const mine = attempts.filter((a) => ids.has(a.d.id) && a.d.type !== 'webhook.test');
    if (!mine.length || recorded.some((r) => r.status === 'succeeded')) return;
    const { rows } = await trx.raw(
      `WITH before AS (SELECT id, is_active FROM webhooks WHERE id = ? FOR UPDATE)
       UPDATE webhooks w SET failing_since = coalesce(failing_since, now()),
              is_active = CASE WHEN failing_since < now() - interval '${DISABLE_AFTER}' THEN false ELSE w.is_active END,
              disabled_reason = CASE WHEN failing_since < now() - interval '${DISABLE_AFTER}' THEN 'Every delivery failed for ${DISABLE_AFTER}.' ELSE disabled_reason END
         FROM before WHERE w.id = before.id
       RETURNING before.is_active AS was_active, w.is_active`,
      [webhookId],
    );
    // Turned off by this statement: the team's admins are told, in the same transaction
    // (a rolled-back one leaves a job that finds the webhook on, and sends nothing).
    if (rows[0]?.was_active && !rows[0].is_active) await notices.add('webhook-disabled', { webhookId }, { jobId: newAccountMailJobId() });
  };
  if (attempts.some((a) => a.outcome === 'succeeded')) {
    const recorded = await recordAll(db);
    // Rare: every success was on a row changed meanwhile, and failures were recorded.
    if (!recorded.some((r) => r.status === 'succeeded') && recorded.length) await db.transaction((trx) => failing(trx, recorded));
    return recorded.length;
  }
  return db.transaction(async (trx) => {
    const recorded = await recordAll(trx);
    await failing(trx, recorded);
    return recorded.length;
  });
}
