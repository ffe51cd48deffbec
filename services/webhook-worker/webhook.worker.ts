import type { Knex } from '../../shared/db/knex';
import { deploymentOf } from '../../shared/db/deployment';
import { startRetention, WEBHOOK_RECORDS } from '../../shared/db/retention';
import { parseNetworks } from '../../shared/net/networks';
import { CONNECTIONS_PER_ORIGIN, postGuarded } from './outbound';
import { Producer } from '../../shared/queues/queues';
import { type WebhookJob, webhookJob, WEBHOOK_JOB_DELIVERIES } from '../../shared/queues/webhook.job';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { type AccountMailJob, accountMailJob, newAccountMailJobId } from '../../shared/queues/account-mail.job';
import { claimLeftMs, onItsWay, relayable } from '../../shared/webhooks/outbox';
import { openSecret } from '../../shared/webhooks/secrets';
import { signPayload } from '../../shared/webhooks/signature';

/** Waits after each failed attempt (the 1st to the 7th); the 8th failure is the last. */
const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000];
/** An endpoint's answer, whole, within this. */
const TIMEOUT_MS = 15_000;
/** The start of an answer kept with its attempt. */
const KEEP_BYTES = 2048;
/** Attempts at once to one webhook, per worker process: a slow endpoint holds only these. */
const PER_WEBHOOK = 4;
/**
 * Attempts at once to one origin (scheme, host, port), per worker process, whoever's
 * webhooks are there: a receiving service several teams use is not sent more than this,
 * and one team's slow path there holds only its webhook's places. As many as the
 * connection pool keeps per origin: an attempt never waits inside it, timer running.
 */
const PER_ORIGIN = CONNECTIONS_PER_ORIGIN;
/**
 * An attempt is started only if it ends, timeout included, this long before its relay may
 * be taken as lost: a job still sending when the relay could claim its deliveries again
 * (a slow endpoint, 4 at a time, each up to the timeout) would have them sent twice. Those
 * left are put back, to be relayed again at once.
 */
const CLAIM_MARGIN_MS = 15_000;
/** How long an attempt waits for its endpoint's turn before it gives its place up (postponed a second). */
const TURN_WAIT_MS = 100;
/** An endpoint that failed every attempt for this long is turned off. */
const DISABLE_AFTER = '5 days';
/** How often the relay looks for due deliveries when no job has just finished: a tenth of a second, one index probe when none are due. */
const RELAY_EVERY_MS = 100;
/** Due deliveries claimed per relay at most: each webhook's first before any webhook's second. */
const RELAY_SCAN = 2000;
/** Deliveries of one webhook relayed and not yet done, at most. */
const IN_FLIGHT_PER_WEBHOOK = 400;
/** Jobs waiting in the queue beyond which the relay waits for the next tick. */
const RELAY_BACKLOG = 200;
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
  /** The text to send; null for a message recorded before bodies were kept as text (then `payload`). */
  body: string | null;
  payload: unknown;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_valid: boolean;
  is_active: boolean;
  deleted: boolean;
  /** An earlier message about the same resource, pending and not in this job: this one waits for it. */
  blocked_until: string | null;
  /** Milliseconds left, when loaded, before the relay may take this delivery as lost and relay it again. */
  claim_left_ms: number;
}

/** What became of one delivery of a job, recorded with the others atomically (record). */
type Result =
  | { d: Due; kind: 'attempt'; outcome: 'succeeded' | 'retry' | 'failed'; status: number | null; body: string | null; error: string | null; durationMs: number; delayMs: number }
  | { d: Due; kind: 'drop'; error: string }
  | { d: Due; kind: 'wait'; ms: number; after?: string | null };

/**
 * At most `limit` attempts at once per key (a webhook, an origin). An attempt waits a moment
 * for a turn (a fast endpoint frees one within milliseconds), then gives its place in the
 * worker up, so a slow endpoint's deliveries never fill the worker and hold up others'.
 */
class EndpointTurns {
  private readonly taken = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  async take(origin: string, waitMs: number): Promise<boolean> {
    if ((this.taken.get(origin) ?? 0) < this.limit) {
      this.taken.set(origin, (this.taken.get(origin) ?? 0) + 1);
      return true;
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(origin) ?? [];
      this.waiting.set(origin, queue);
      const wake = () => {
        clearTimeout(timer);
        resolve(true); // the turn is handed over: `taken` stays as it is
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(wake), 1);
        resolve(false);
      }, waitMs);
      queue.push(wake);
    });
  }

  give(origin: string): void {
    const next = this.waiting.get(origin)?.shift();
    if (next) return next();
    const left = (this.taken.get(origin) ?? 1) - 1;
    if (left > 0) this.taken.set(origin, left);
    else this.taken.delete(origin);
    if (!this.waiting.get(origin)?.length) this.waiting.delete(origin);
  }
}

/**
 * The outbox is a queue: most of the time its statistics say what is true, that next to
 * nothing is pending. A burst (a calendar import, a fan-out of thousands of messages in one
 * commit) makes that false until autovacuum analyzes the table again, a minute or more
 * later; meanwhile a statement with a condition on `status = 'pending'` may be planned as a
 * walk of a whole pending-only index, thought to hold a row or two, and read every pending
 * delivery (10,000 of them, for each job's record, in bench/webhooks). So the worker's
 * statements find rows by id with no such condition beside it (checking the status once the
 * row is locked, or against the state its job started from), and the relay, when it has
 * something to relay, asks Postgres to analyze the table if 2,000 rows or more changed
 * since it last was (a table of millions of old deliveries would wait for a tenth of them
 * to change before autovacuum looks): at most once a minute per worker, a sampled read of
 * at most 30,000 rows.
 * test/scale/webhook-plans.test.ts explains each statement after such a burst.
 */
const STALE_AFTER_CHANGES = 2000;

/** How often the relay looks at the table's count of changes, and how often at most it has it analyzed. */
const STATISTICS_CHECK_MS = 2000;
const ANALYZE_EVERY_MS = 60_000;

class FreshStatistics {
  private checked = 0;
  private analyzed = 0;

  constructor(
    private readonly db: Knex,
    private readonly logger: WorkerContext['logger'],
  ) {}

  async refresh(): Promise<void> {
    const now = Date.now();
    if (now - this.checked < STATISTICS_CHECK_MS || now - this.analyzed < ANALYZE_EVERY_MS) return;
    this.checked = now;
    try {
      const { rows } = await this.db.raw(
        `SELECT n_mod_since_analyze >= ${STALE_AFTER_CHANGES} AS stale FROM pg_stat_user_tables WHERE relid = 'webhook_deliveries'::regclass`,
      );
      if (!rows[0]?.stale) return;
      this.analyzed = now;
      await this.db.raw('ANALYZE webhook_deliveries');
    } catch (err) {
      // Not the table's owner, or Postgres busy: autovacuum will do it in its time.
      this.logger.warn({ err: (err as Error).message }, 'could not analyze the webhook outbox');
    }
  }
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
 * are claimed from Postgres (SKIP LOCKED: several workers share them) and queued, up to 100
 * of one webhook per job; a job makes each one's signed attempt (in order per resource, at
 * most 4 at once per endpoint) and records them all at once, atomically. See docs/webhooks.md.
 */
export function webhookWorker(ctx: WorkerContext): WorkerDefinition<WebhookJob, number> {
  const { db, config, logger } = ctx;
  const allowed = parseNetworks(config.webhookAllowedNetworks);
  const producer = new Producer(webhookJob, ctx.redis, config.queuePrefix, logger, deploymentOf(db));
  const notices = new Producer(accountMailJob, ctx.redis, config.queuePrefix, logger, deploymentOf(db));
  const turns = { webhook: new EndpointTurns(PER_WEBHOOK), origin: new EndpointTurns(PER_ORIGIN) };
  const retention = startRetention(ctx, WEBHOOK_RECORDS, config.deliveryRetentionDays);

  const statistics = new FreshStatistics(db, logger);
  let relaying: Promise<void> | null = null;
  let closing = false;
  const relay = async (): Promise<void> => {
    // The queue holds what the workers will take soon, not the whole outbox: Redis stays small
    // and no job waits there long enough to be relayed again. Each webhook has at most
    // IN_FLIGHT_PER_WEBHOOK deliveries relayed and not yet done, so one busy endpoint's
    // backlog never fills the queue ahead of the others'.
    if ((await producer.queue.getWaitingCount()) >= RELAY_BACKLOG) return;
    // Per webhook, not the outbox's oldest first: a webhook whose backlog is at its limit
    // (a slow endpoint with thousands due) would otherwise fill every scan with deliveries
    // it may not take, and every other team's wait behind it. The webhooks with something
    // pending are found by skipping through the (webhook, resource, message) index, one
    // probe each; each gives up to its room of its oldest due deliveries, from the
    // (webhook, next attempt) index; webhooks take turns, first deliveries first.
    const { rows: candidates } = await db.raw(
      `WITH RECURSIVE hooks AS (
         (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.webhook_id > h.webhook_id ORDER BY d.webhook_id LIMIT 1)
           FROM hooks h WHERE h.webhook_id IS NOT NULL),
       in_flight AS (
         SELECT webhook_id, count(*) AS n FROM webhook_deliveries f
          WHERE f.status = 'pending' AND ${onItsWay('f')} GROUP BY webhook_id),
       due AS (
         SELECT d.id, d.next_attempt_at, row_number() OVER (PARTITION BY h.webhook_id ORDER BY d.next_attempt_at, d.id) AS rank
           FROM hooks h LEFT JOIN in_flight f USING (webhook_id)
           CROSS JOIN LATERAL (
             SELECT e.id, e.next_attempt_at FROM webhook_deliveries e
              WHERE e.webhook_id = h.webhook_id AND e.status = 'pending' AND e.next_attempt_at <= now()
                AND ${relayable('e')}
              ORDER BY e.next_attempt_at, e.id
              LIMIT greatest(0, ${IN_FLIGHT_PER_WEBHOOK} - coalesce(f.n, 0))) AS d
          WHERE h.webhook_id IS NOT NULL)
       SELECT id FROM due ORDER BY rank, next_attempt_at, id LIMIT ${RELAY_SCAN}`,
    );
    const ids = (candidates as Array<{ id: number }>).map((c) => c.id);
    if (!ids.length) return;
    await statistics.refresh();
    // Claimed only if still due and unclaimed, and not locked: a row another worker's relay
    // or a job's record holds is left for a later relay, never waited for (waiting on rows
    // locked in another order made deadlocks, and a job whose record fails sends again).
    // Locked by id alone, one probe of the key each, and checked once locked (a condition on
    // the status beside the id would let the planner walk a pending-only index instead, and
    // a list of ids a scan of the table when it thinks the table small: see FreshStatistics).
    const { rows } = await db.raw(
      `WITH locked AS (
         SELECT l.* FROM unnest(?::bigint[]) AS u(id)
          CROSS JOIN LATERAL (SELECT id, status, next_attempt_at, relayed_at FROM webhook_deliveries WHERE id = u.id FOR UPDATE SKIP LOCKED) AS l)
       UPDATE webhook_deliveries d SET relayed_at = now(), relays = d.relays + 1
         FROM locked l
        WHERE d.id = l.id AND l.status = 'pending' AND l.next_attempt_at <= now()
          AND ${relayable('l')}
        RETURNING d.uid, d.relays, d.webhook_id, d.message_id`,
      [`{${ids.join(',')}}`],
    );
    const due = (rows as Array<{ uid: string; relays: number; webhook_id: number; message_id: number }>).sort((a, b) => a.message_id - b.message_id);
    if (!due.length) return;
    const byWebhook = new Map<number, typeof due>();
    for (const d of due) byWebhook.set(d.webhook_id, [...(byWebhook.get(d.webhook_id) ?? []), d]);
    const jobs = [...byWebhook.values()].flatMap((list) =>
      Array.from({ length: Math.ceil(list.length / WEBHOOK_JOB_DELIVERIES) }, (_, i) => list.slice(i * WEBHOOK_JOB_DELIVERIES, (i + 1) * WEBHOOK_JOB_DELIVERIES)),
    );
    await producer.addBulk(
      jobs.map((list) => ({ name: 'deliver', data: { deliveries: list.map((d) => ({ delivery: d.uid, relay: d.relays })) }, opts: { jobId: `${list[0].uid}-${list[0].relays}` } })),
    );
  };
  /**
   * Relays now, every tick and as soon as a job is done (its webhook has room again). One
   * relay at a time: asked during one, another runs right after it, so the room a job made
   * while a relay was reading is filled at once, not a tick later.
   */
  let again = false;
  const relaySoon = () => {
    if (relaying) {
      again = true;
      return;
    }
    again = false;
    relaying = relay()
      .catch((err) => logger.warn({ err: (err as Error).message }, 'could not relay webhook deliveries; trying again'))
      .finally(() => {
        relaying = null;
        if (again && !closing) relaySoon();
      });
  };
  const timer = setInterval(relaySoon, RELAY_EVERY_MS);

  return {
    contract: webhookJob,
    concurrency: 16,
    process: async (job, c, log) => {
      const results = await deliverAll(c.db, job.data, { allowed, turns, appKey: config.appKey });
      const recorded = await record(c.db, results, notices);
      log.info({ deliveries: job.data.deliveries.length, attempts: results.filter((r) => r.kind === 'attempt').length, recorded }, 'webhook deliveries');
      relaySoon();
      return recorded;
    },
    close: async () => {
      closing = true;
      clearInterval(timer);
      await retention.stop();
      await relaying;
      await producer.close();
      await notices.close();
    },
  };
}

/**
 * The job's deliveries still as they were relayed, with what sending them needs, in message
 * order. Each row is found by its key, one probe each (joins left to the planner were made
 * scans of whole tables when it thought them small). A delivery's earlier pending messages
 * are read through the (webhook, resource, message) index: the fence (OFFSET 0) keeps the
 * planner from answering max() by walking the due index from its end instead, which it
 * finds cheap when it believes next to nothing is pending (see FreshStatistics).
 */
async function load(db: Knex, job: WebhookJob): Promise<Due[]> {
  const uids = `{${job.deliveries.map((d) => d.delivery).join(',')}}`;
  const { rows } = await db.raw(
    `SELECT d.id, d.uid, d.webhook_id, d.message_id, d.resource, d.status, d.attempts, d.relays,
            m.uid AS message_uid, m.type, m.body, m.payload,
            w.url, w.secret_enc, w.previous_secret_enc, coalesce(w.previous_secret_expires_at > now(), false) AS previous_valid,
            w.is_active, w.deleted_at IS NOT NULL AS deleted, ${claimLeftMs('d')} AS claim_left_ms,
            (SELECT max(earlier.next_attempt_at) FROM (
               SELECT e.next_attempt_at FROM webhook_deliveries e
                WHERE e.webhook_id = d.webhook_id AND e.resource = d.resource AND e.status = 'pending'
                  AND e.message_id < d.message_id AND e.uid <> ALL (?::text[])
               OFFSET 0) AS earlier) AS blocked_until
       FROM unnest(?::text[]) AS u(uid)
      CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries WHERE uid = u.uid LIMIT 1) AS d
      CROSS JOIN LATERAL (SELECT uid, type, body, CASE WHEN body IS NULL THEN payload END AS payload FROM webhook_messages WHERE id = d.message_id LIMIT 1) AS m
      CROSS JOIN LATERAL (SELECT * FROM webhooks WHERE id = d.webhook_id LIMIT 1) AS w
      ORDER BY d.message_id`,
    [uids, uids],
  );
  const relays = new Map(job.deliveries.map((d) => [d.delivery, d.relay]));
  return (rows as Due[]).filter((d) => d.status === 'pending' && relays.get(d.uid) === d.relays);
}

/**
 * Sends the job's deliveries: those about one resource one after the other, in order (one
 * that is to be tried again holds the ones after it), the resources side by side as the
 * endpoint's turns allow.
 */
async function deliverAll(db: Knex, job: WebhookJob, opts: { allowed: ReturnType<typeof parseNetworks>; turns: Record<'webhook' | 'origin', EndpointTurns>; appKey: string }): Promise<Result[]> {
  const results: Result[] = [];
  const chains = new Map<string, Due[]>();
  for (const d of await load(db, job)) {
    if (d.deleted || (!d.is_active && d.type !== 'webhook.test')) results.push({ d, kind: 'drop', error: d.deleted ? 'the webhook was deleted' : 'the webhook is turned off' });
    // Behind an earlier message about it: looked at again a second after that one's next attempt.
    else if (d.blocked_until) results.push({ d, kind: 'wait', ms: 1000, after: d.blocked_until });
    else chains.set(d.resource, [...(chains.get(d.resource) ?? []), d]);
  }
  // The job's deliveries all go to one webhook: PER_WEBHOOK chains at a time. Its secrets
  // are opened once, not per attempt.
  const queue = [...chains.values()];
  const opened = new Map<string, string>();
  const open = (sealed: string) => {
    let secret = opened.get(sealed);
    if (secret === undefined) opened.set(sealed, (secret = openSecret(opts.appKey, sealed)));
    return secret;
  };
  const loaded = Date.now();
  const runChain = async (chain: Due[]) => {
      for (const [i, d] of chain.entries()) {
        if (Date.now() > loaded + d.claim_left_ms - TIMEOUT_MS - CLAIM_MARGIN_MS) {
          for (const rest of chain.slice(i)) results.push({ d: rest, kind: 'wait', ms: 0 });
          return;
        }
        // The webhook's place, then its origin's; without both, the chain waits a second.
        const hook = String(d.webhook_id);
        const origin = new URL(d.url).origin;
        let placed = await opts.turns.webhook.take(hook, TURN_WAIT_MS);
        if (placed && !(await opts.turns.origin.take(origin, TURN_WAIT_MS))) {
          opts.turns.webhook.give(hook);
          placed = false;
        }
        if (!placed) {
          for (const rest of chain.slice(i)) results.push({ d: rest, kind: 'wait', ms: 1000 });
          return;
        }
        let result: Result;
        try {
          result = await attempt(d, opts.allowed, open);
        } finally {
          opts.turns.origin.give(origin);
          opts.turns.webhook.give(hook);
        }
        results.push(result);
        if (result.kind === 'attempt' && result.outcome === 'retry') {
          for (const rest of chain.slice(i + 1)) results.push({ d: rest, kind: 'wait', ms: result.delayMs + 1000 });
          return;
        }
      }
  };
  await Promise.all(
    Array.from({ length: Math.min(PER_WEBHOOK, queue.length) }, async () => {
      for (let chain = queue.shift(); chain; chain = queue.shift()) await runChain(chain);
    }),
  );
  return results;
}

/** One signed POST and what it means for the delivery. */
async function attempt(d: Due, allowed: ReturnType<typeof parseNetworks>, open: (sealed: string) => string): Promise<Result> {
  const number = d.attempts + 1;
  const started = Date.now();
  let status: number | null = null;
  let body: string | null = null;
  let error: string | null = null;
  let waitMs: number | null = null;
  let blocked = false;
  try {
    const text = d.body ?? JSON.stringify(d.payload);
    const id = `msg_${d.message_uid}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = [d.secret_enc, ...(d.previous_valid && d.previous_secret_enc ? [d.previous_secret_enc] : [])].map(open);
    const signatures = secrets.map((secret) => signPayload(secret, id, timestamp, text));
    const answer = await postGuarded(
      new URL(d.url),
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
 * API, relayed again) keeps its new state, and an attempt on it is not recorded.
 * The usual job (attempts answered, nothing waiting) is recorded in one statement: its
 * attempts and drops, the release of each resource's next message, and the endpoint's
 * failing mark cleared. A job with waits or only failures takes a transaction around that
 * statement and the ones those need. Round trips to Postgres are most of a job's cost
 * beside its POSTs (docs/webhooks.md, "Throughput").
 */
async function record(db: Knex, results: Result[], notices: Producer<AccountMailJob>): Promise<number> {
  if (!results.length) return 0;
  const attempts = results.filter((r): r is Extract<Result, { kind: 'attempt' }> => r.kind === 'attempt');
  const drops = results.filter((r): r is Extract<Result, { kind: 'drop' }> => r.kind === 'drop');
  const waits = results.filter((r): r is Extract<Result, { kind: 'wait' }> => r.kind === 'wait');
  const webhookId = results[0].d.webhook_id;
  const json = (rows: unknown[]) => JSON.stringify(rows);
  // Endpoint attempts other than tests, none of them answered: the endpoint may be failing.
  const mayFail = !attempts.some((a) => a.outcome === 'succeeded') && attempts.some((a) => a.d.type !== 'webhook.test');
  const write = async (q: Knex | Knex.Transaction): Promise<number> => {
    // Attempts and drops, and their attempts' rows. A resource whose delivery here is done
    // (not to be tried again): the next one about it, waiting, may go now. Only a row still
    // unclaimed when it is locked (one relayed meanwhile is on its way: touching it would
    // have it relayed and sent twice), and not one another transaction holds (its own job
    // records it; it goes when its wait ends): this statement never waits on rows of other
    // jobs, so two records cannot deadlock. Each next one is found by its own walk of the
    // (webhook, resource, message) index and locked by its id: about one row read per
    // finished delivery, whatever the statistics say (joins left to the planner walked
    // every pending row, once per finished delivery, when the statistics lagged behind a
    // burst; test/scale/webhook-plans.test.ts). Rows are found by id with no condition on
    // the status beside it, for the same reason.
    // A job whose deliveries all wait (behind earlier messages, or for their turn) has none.
    const { rows } = !attempts.length && !drops.length ? { rows: [] } : await q.raw(
      `WITH r AS (SELECT * FROM json_to_recordset(?::json) AS r(id bigint, relays int, from_status text, status text, attempt int, delay_ms bigint, code int, body text, error text, duration_ms int, webhook_id bigint, resource text, message_id bigint, test boolean)),
       updated AS (
         UPDATE webhook_deliveries d
            SET status = CASE WHEN r.status = 'retry' THEN 'pending' ELSE r.status END, attempts = coalesce(r.attempt, d.attempts),
                next_attempt_at = CASE WHEN r.status = 'retry' THEN now() + r.delay_ms * interval '1 millisecond' END,
                relayed_at = NULL, last_status_code = CASE WHEN r.attempt IS NULL THEN d.last_status_code ELSE r.code END,
                last_error = r.error, updated_at = now()
           FROM r WHERE d.id = ANY (?::bigint[]) AND d.id = r.id AND d.status = r.from_status AND d.relays = r.relays
         RETURNING d.id),
       attempted AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, status_code, duration_ms, response_body, error)
         SELECT r.id, r.attempt, r.code, r.duration_ms, r.body, r.error FROM r JOIN updated USING (id) WHERE r.attempt IS NOT NULL),
       next AS (
         SELECT DISTINCT ON (r.webhook_id, r.resource) n.id
           FROM r JOIN updated USING (id)
           CROSS JOIN LATERAL (
             SELECT e.id, e.message_id FROM webhook_deliveries e
              WHERE e.webhook_id = r.webhook_id AND e.resource = r.resource AND e.message_id > r.message_id
                AND e.status = 'pending' AND e.relayed_at IS NULL AND e.id <> ALL (?::bigint[])
              ORDER BY e.message_id LIMIT 1) AS n
          WHERE r.status <> 'retry'
          ORDER BY r.webhook_id, r.resource, n.message_id),
       locked AS (SELECT id, status, relayed_at FROM webhook_deliveries WHERE id = ANY (ARRAY(SELECT id FROM next)) FOR UPDATE SKIP LOCKED),
       released AS (
         UPDATE webhook_deliveries d SET next_attempt_at = now()
           FROM locked l WHERE d.id = l.id AND l.status = 'pending' AND l.relayed_at IS NULL),
       answering AS (
         UPDATE webhooks w SET failing_since = NULL
          WHERE w.id = ? AND w.failing_since IS NOT NULL
            AND EXISTS (SELECT 1 FROM r JOIN updated USING (id) WHERE r.status = 'succeeded'))
       SELECT updated.id, r.test FROM updated JOIN r USING (id) WHERE r.attempt IS NOT NULL`,
      [
        json([
          ...attempts.map((a) => ({ ...where(a.d), status: a.outcome, attempt: a.d.attempts + 1, delay_ms: a.delayMs, code: a.status, body: a.body, error: a.error, duration_ms: a.durationMs, test: a.d.type === 'webhook.test' })),
          ...drops.map((r) => ({ ...where(r.d), status: 'failed', error: r.error })),
        ]),
        `{${[...attempts, ...drops].map((a) => a.d.id).join(',')}}`,
        `{${results.map((r) => r.d.id).join(',')}}`,
        webhookId,
      ],
    );
    const recorded = rows as Array<{ id: string | number; test: boolean }>;
    if (waits.length) {
      await q.raw(
        `UPDATE webhook_deliveries d SET next_attempt_at = greatest(coalesce(r.after, now()), now()) + r.ms * interval '1 millisecond', relayed_at = NULL, updated_at = now()
           FROM json_to_recordset(?::json) AS r(id bigint, relays int, from_status text, ms bigint, after timestamptz)
          WHERE d.id = r.id AND d.status = r.from_status AND d.relays = r.relays`,
        [json(waits.map((r) => ({ ...where(r.d), ms: r.ms, after: r.after ?? null })))],
      );
    }
    // Only failures recorded: the endpoint is failing, and may have been for long enough.
    if (mayFail && recorded.some((r) => !r.test)) {
      const { rows: marked } = await q.raw(
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
      if (marked[0]?.was_active && !marked[0].is_active) await notices.add('webhook-disabled', { webhookId }, { jobId: newAccountMailJobId() });
    }
    return recorded.length;
  };
  return waits.length || mayFail ? db.transaction(write) : write(db);
}

/** What identifies a delivery's row in the state its job started from, and its resource. */
function where(d: Due) {
  return { id: d.id, relays: d.relays, from_status: 'pending', webhook_id: d.webhook_id, resource: d.resource, message_id: d.message_id };
}
