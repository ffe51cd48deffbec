import type { Knex } from '../../shared/db/knex';
import { deploymentOf } from '../../shared/db/deployment';
import type { Logger } from '../../shared/logging/logger';
import { BlockedAddressError, parseNetworks, postGuarded } from '../../shared/net/outbound';
import { Producer } from '../../shared/queues/queues';
import { type WebhookJob, webhookJob } from '../../shared/queues/webhook.job';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { signPayload } from '../../shared/webhooks/signature';

/** Waits after each failed attempt (the 1st to the 7th); the 8th failure is the last. */
const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000];
/** An endpoint's answer, whole, within this. */
const TIMEOUT_MS = 15_000;
/** The start of an answer kept with its attempt. */
const KEEP_BYTES = 2048;
/** Attempts at once to one endpoint (its origin), per worker process: a slow one holds only these. */
const PER_ENDPOINT = 4;
/** An endpoint that failed every attempt for this long is turned off. */
const DISABLE_AFTER = '5 days';
const RELAY_EVERY_MS = 500;
const RELAY_BATCH = 500;
/** A relayed delivery whose job has not run after this is relayed again (its job was lost with Redis). */
const RELAY_AGAIN_AFTER = '2 minutes';
/** The longest Retry-After honoured. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

type Outcome = 'succeeded' | 'retry' | 'failed' | 'waiting' | 'stale';

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
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean;
  is_active: boolean;
  deleted: boolean;
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
 * are claimed from Postgres (SKIP LOCKED: several workers share them) and queued; each job
 * makes one signed attempt and records it. See docs/webhooks.md.
 */
export function webhookWorker(ctx: WorkerContext): WorkerDefinition<WebhookJob, Outcome> {
  const { db, config, logger } = ctx;
  const allowed = parseNetworks(config.webhookAllowedNetworks);
  const producer = new Producer(webhookJob, ctx.redis, config.queuePrefix, logger, deploymentOf(db));
  const inFlight = new Map<string, number>();

  let relaying: Promise<void> | null = null;
  const relay = async () => {
    const { rows } = await db.raw(
      `UPDATE webhook_deliveries SET relayed_at = now(), relays = relays + 1
        WHERE id IN (SELECT id FROM webhook_deliveries
                      WHERE status = 'pending' AND next_attempt_at <= now()
                        AND (relayed_at IS NULL OR relayed_at < now() - interval '${RELAY_AGAIN_AFTER}')
                      ORDER BY next_attempt_at LIMIT ${RELAY_BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING uid, relays`,
    );
    const due = rows as Array<{ uid: string; relays: number }>;
    if (!due.length) return;
    await producer.addBulk(due.map((d) => ({ name: 'deliver', data: { delivery: d.uid, relay: d.relays }, opts: { jobId: `${d.uid}-${d.relays}` } })));
  };
  const timer = setInterval(() => {
    relaying ??= relay()
      .catch((err) => logger.warn({ err: (err as Error).message }, 'could not relay webhook deliveries; trying again'))
      .finally(() => {
        relaying = null;
      });
  }, RELAY_EVERY_MS);

  return {
    contract: webhookJob,
    concurrency: 32,
    process: (job, c, log) => attempt(c.db, job.data, { allowed, inFlight, log }),
    close: async () => {
      clearInterval(timer);
      await relaying;
      await producer.close();
    },
  };
}

/** Puts a delivery back to wait (a busy endpoint) without spending an attempt. */
const postpone = (db: Knex, id: number, ms: number) =>
  db('webhook_deliveries').where({ id }).update({ next_attempt_at: db.raw(`now() + interval '${ms} milliseconds'`), relayed_at: null, updated_at: db.fn.now() });

async function attempt(
  db: Knex,
  job: WebhookJob,
  opts: { allowed: ReturnType<typeof parseNetworks>; inFlight: Map<string, number>; log: Logger },
): Promise<Outcome> {
  const { rows } = await db.raw(
    `SELECT d.id, d.uid, d.webhook_id, d.message_id, d.resource, d.status, d.attempts, d.relays,
            m.uid AS message_uid, m.type, m.payload,
            w.url, w.secret, w.previous_secret, coalesce(w.previous_secret_expires_at > now(), false) AS previous_valid,
            w.is_active, w.deleted_at IS NOT NULL AS deleted
       FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.uid = ?`,
    [job.delivery],
  );
  const d = rows[0] as Due | undefined;
  if (!d || d.status !== 'pending' || d.relays !== job.relay) return 'stale';
  if (d.deleted || (!d.is_active && d.type !== 'webhook.test')) {
    await db('webhook_deliveries')
      .where({ id: d.id })
      .update({ status: 'failed', last_error: d.deleted ? 'the webhook was deleted' : 'the webhook is turned off', next_attempt_at: null, updated_at: db.fn.now() });
    return 'failed';
  }
  // In order per resource: an earlier message about it, still pending, goes first.
  // It is looked at again a second after that one's next attempt, not every second meanwhile.
  const earlier = await db('webhook_deliveries')
    .first('next_attempt_at')
    .where({ webhook_id: d.webhook_id, resource: d.resource, status: 'pending' })
    .where('message_id', '<', d.message_id)
    .orderBy('message_id');
  if (earlier) {
    await db('webhook_deliveries')
      .where({ id: d.id })
      .update({ next_attempt_at: db.raw("greatest(?::timestamptz, now()) + interval '1 second'", [earlier.next_attempt_at]), relayed_at: null, updated_at: db.fn.now() });
    return 'waiting';
  }
  const url = new URL(d.url);
  const busy = opts.inFlight.get(url.origin) ?? 0;
  if (busy >= PER_ENDPOINT) {
    await postpone(db, d.id, 1000);
    return 'waiting';
  }
  opts.inFlight.set(url.origin, busy + 1);
  const number = d.attempts + 1;
  const started = Date.now();
  let status: number | null = null;
  let body: string | null = null;
  let error: string | null = null;
  let waitMs: number | null = null;
  try {
    const text = JSON.stringify(d.payload);
    const id = `msg_${d.message_uid}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const signatures = [signPayload(d.secret, id, timestamp, text), ...(d.previous_valid && d.previous_secret ? [signPayload(d.previous_secret, id, timestamp, text)] : [])];
    const answer = await postGuarded(
      url,
      text,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'calendar-service-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
      },
      { timeoutMs: TIMEOUT_MS, allowed: opts.allowed, keepBytes: KEEP_BYTES },
    );
    status = answer.status;
    body = answer.body;
    waitMs = retryAfterMs(answer.headers['retry-after'], Date.now());
  } catch (err) {
    error = err instanceof BlockedAddressError ? err.message : `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${(err as Error).message}`;
    if (err instanceof BlockedAddressError) waitMs = -1;
  } finally {
    opts.inFlight.set(url.origin, (opts.inFlight.get(url.origin) ?? 1) - 1);
  }
  const durationMs = Date.now() - started;
  const succeeded = status !== null && status >= 200 && status < 300;
  // Retried: no answer (timeout, connection), 429 and 5xx. Not: other answers, a refused address.
  const retryable = !succeeded && waitMs !== -1 && (status === null || status === 429 || status >= 500);
  const last = number > RETRY_SCHEDULE_MS.length;
  const outcome: Outcome = succeeded ? 'succeeded' : retryable && !last ? 'retry' : 'failed';
  const delayMs = outcome === 'retry' ? Math.min(MAX_RETRY_AFTER_MS, waitMs !== null && waitMs >= 0 ? Math.max(waitMs, 1000) : RETRY_SCHEDULE_MS[number - 1]) : 0;
  await db.transaction(async (trx) => {
    await trx('webhook_attempts').insert({ delivery_id: d.id, attempt: number, status_code: status, duration_ms: durationMs, response_body: body, error });
    await trx('webhook_deliveries')
      .where({ id: d.id })
      .update({
        status: outcome === 'retry' ? 'pending' : outcome,
        attempts: number,
        next_attempt_at: outcome === 'retry' ? trx.raw(`now() + interval '${delayMs} milliseconds'`) : null,
        relayed_at: null,
        last_status_code: status,
        last_error: error,
        updated_at: trx.fn.now(),
      });
    if (outcome !== 'retry') {
      // The next message about the same resource, waiting for this one, may go now.
      await trx.raw(
        `UPDATE webhook_deliveries SET next_attempt_at = now(), relayed_at = NULL
          WHERE id = (SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND resource = ? AND status = 'pending' AND message_id > ? ORDER BY message_id LIMIT 1)`,
        [d.webhook_id, d.resource, d.message_id],
      );
    }
    if (succeeded) {
      await trx('webhooks').where({ id: d.webhook_id }).whereNotNull('failing_since').update({ failing_since: null });
    } else if (d.type !== 'webhook.test') {
      await trx.raw(
        `UPDATE webhooks SET failing_since = coalesce(failing_since, now()),
                is_active = CASE WHEN failing_since < now() - interval '${DISABLE_AFTER}' THEN false ELSE is_active END,
                disabled_reason = CASE WHEN failing_since < now() - interval '${DISABLE_AFTER}' THEN 'Every delivery failed for ${DISABLE_AFTER}.' ELSE disabled_reason END
          WHERE id = ?`,
        [d.webhook_id],
      );
    }
  });
  opts.log.info({ delivery: d.uid, attempt: number, status, durationMs, outcome }, 'webhook attempt');
  return outcome;
}
