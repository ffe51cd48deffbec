import { randomUUID } from 'node:crypto';
import { type Job, UnrecoverableError } from 'bullmq';
import type { Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import type { Logger } from '../../shared/logging/logger';
import type { MailJob, MailKind, MailMessage } from '../../shared/queues/mail.job';
import type { JobMeta } from '../../shared/queues/queues';
import { type Claim, claimDeliveries, type DeliveryRef, deliveryStatuses, markFailed, releaseClaim, waitForQueuingTransaction } from './deliveries.repository';
import type { MailTransport } from './mail.transport';
import { messageFactory, type Sender } from './message.builder';
import type { SendRate } from './send-rate';
import type { SentRecorder } from './sent-recorder';
import { classifySendError, type SendFailure } from './smtp-errors';

export interface MailDeps {
  db: Knex;
  clock: Clock;
  transport: MailTransport;
  from: Sender;
  recorder: SentRecorder;
  rate: SendRate;
  /** Counts each message's outcome: sent, failed (for good) or retry (released for a later attempt). */
  countDelivery: (kind: MailKind, outcome: 'sent' | 'failed' | 'retry') => void;
}

/** What became of a job's messages (the job's return value). */
export interface MailOutcome {
  sent: number;
  /** Already sent or failed by an earlier run: nothing done. */
  skipped: number;
  /** Their transaction rolled back: no row, nothing to send. */
  gone: number;
}

/** The message's outbox file name: fixed per delivery, and never the same for two databases' rows. */
const outboxName = (m: MailMessage, kind: MailKind) => `d${m.deliveryId}-${m.key ?? 'nokey'}-${kind}`;

/**
 * One job: claim its messages' delivery rows, send each, record each. The rows are the
 * idempotency record, so a re-run job (a retry, or a job taken over from a crashed worker)
 * never sends a message whose row says sent or failed.
 *
 * Crash between the server's "250 OK" and our "sent" commit: the row stays claimed, and
 * the re-run sends the message again (same Message-ID, same UID and SEQUENCE, which
 * calendar clients apply idempotently). We chose a possible duplicate in that window of
 * one local commit over a possibly lost message: a lost cancellation leaves a dead event
 * in someone's calendar. A crash at any earlier point of the send (before the server's
 * reply) delivers nothing, since SMTP servers drop a message whose DATA was not answered.
 *
 * 5xx: that message is recorded failed with the reply and never tried again. 4xx and
 * connection errors: released for the job's next attempt (BullMQ's exponential backoff);
 * on the last attempt, recorded failed. The job fails (UnrecoverableError) when messages
 * failed for good, and is retried while some may still go through.
 */
export async function processMailJob(job: Job<MailJob & { meta?: JobMeta }>, deps: MailDeps, log: Logger): Promise<MailOutcome> {
  // Made before anything is claimed: a message that cannot be built leaves no claim behind.
  const build = await messageFactory(job.data, deps.from, deps.clock.now().getTime());
  const token = randomUUID();
  const { claims, skipped, gone } = await claim(deps.db, job.data, token, log);
  const todo = job.data.messages.filter((m) => claims.has(m.deliveryId));
  for (const m of todo) if (claims.get(m.deliveryId)?.interruptedClaim) log.warn({ deliveryId: m.deliveryId }, 'an earlier attempt stopped mid-send; sending again');

  const failures: Array<{ message: MailMessage; failure: SendFailure }> = [];
  const unrecorded: unknown[] = [];
  let sent = 0;
  // Every send runs to its end before the job ends, so no message is still in flight when
  // the job is retried or taken over.
  await Promise.all(
    todo.map(async (m) => {
      let messageId: string;
      try {
        await deps.rate.take();
        ({ messageId } = await deps.transport.send(build(m), outboxName(m, job.data.kind)));
      } catch (err) {
        failures.push({ message: m, failure: classifySendError(err) });
        return;
      }
      sent++;
      deps.countDelivery(job.data.kind, 'sent');
      try {
        if (!(await deps.recorder.record(m.deliveryId, token, messageId))) log.warn({ deliveryId: m.deliveryId }, 'sent, but another attempt had taken the row over');
      } catch (err) {
        unrecorded.push(err);
      }
    }),
  );
  const retry = failures.length ? await recordFailures(deps, job, token, failures, log) : 0;
  // Sent but not recorded (the database stayed away): the job must run again for those.
  if (unrecorded.length) throw unrecorded[0];
  const total = job.data.messages.length;
  // One line per job, with the request id that queued it (the child logger carries it).
  log.info({ kind: job.data.kind, messages: total, sent, skipped, gone, failed: failures.length }, 'mail job finished');
  if (retry) throw new Error(`${retry} of ${total} messages will be retried: ${failures[0].failure.reply}`);
  if (failures.length) throw new UnrecoverableError(`${failures.length} of ${total} messages failed: ${failures[0].failure.reply}`);
  return { sent, skipped, gone };
}

/**
 * Records failed sends: for good when permanent or on the job's last attempt, otherwise
 * released for the next attempt. Answers how many wait for that attempt.
 */
async function recordFailures(
  deps: Pick<MailDeps, 'db' | 'countDelivery'>,
  job: Job<MailJob>,
  token: string,
  failures: Array<{ message: MailMessage; failure: SendFailure }>,
  log: Logger,
): Promise<number> {
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  let retry = 0;
  for (const { message, failure } of failures) {
    if (failure.permanent || lastAttempt) {
      await markFailed(deps.db, message.deliveryId, token, failure.reply);
      deps.countDelivery(job.data.kind, 'failed');
      log.warn({ deliveryId: message.deliveryId, reply: failure.reply, permanent: failure.permanent }, 'delivery failed');
    } else {
      await releaseClaim(deps.db, message.deliveryId, token, failure.reply);
      deps.countDelivery(job.data.kind, 'retry');
      retry++;
    }
  }
  return retry;
}

/** The claims, and what needs nothing from us (done before, or never committed). */
async function claim(db: Knex, data: MailJob, token: string, log: Logger) {
  const refs: DeliveryRef[] = data.messages;
  const ids = refs.map((m) => m.deliveryId);
  const claims = await claimDeliveries(db, refs, token);
  const unclaimedRefs = () => refs.filter((r) => !claims.has(r.deliveryId));
  let statuses = unclaimedRefs().length ? await deliveryStatuses(db, unclaimedRefs()) : new Map();
  let unclaimed = ids.filter((id) => !claims.has(id));
  if (unclaimed.some((id) => statuses.get(id) === undefined || statuses.get(id) === 'queued')) {
    // Queued by a transaction that had not committed at the claim (it may have since, or
    // may roll back): wait for it to end, then claim again.
    await waitForQueuingTransaction(db, data.eventId);
    for (const [id, c] of await claimDeliveries(db, unclaimedRefs(), token)) claims.set(id, c);
    unclaimed = ids.filter((id) => !claims.has(id));
    statuses = unclaimed.length ? await deliveryStatuses(db, unclaimedRefs()) : new Map();
  }
  // Still queued but not ours: another attempt holds the rows at this very moment; retry later.
  if (unclaimed.some((id) => statuses.get(id) === 'queued')) throw new Error('deliveries could not be claimed');
  // No row with that id and key: its transaction rolled back, or the job is not this
  // database's (a restored or recreated one, whose row ids start again).
  const gone = unclaimed.filter((id) => statuses.get(id) === undefined).length;
  if (gone) log.info({ gone }, 'delivery rows never committed; nothing to send for them');
  return { claims: claims as Map<number, Claim>, skipped: unclaimed.length - gone, gone };
}
