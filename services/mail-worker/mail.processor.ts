import { randomUUID } from 'node:crypto';
import { type Job, UnrecoverableError } from 'bullmq';
import type { Mailbox } from '../../shared/config/mailbox';
import type { Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import type { Logger } from '../../shared/logging/logger';
import type { MailJob } from '../../shared/queues/mail-jobs';
import type { JobMeta } from '../../shared/queues/queues';
import { type Claim, claimDelivery, deliveryStatus, markFailed, markSent, releaseClaim, waitForQueuingTransaction } from './deliveries.repository';
import type { MailTransport } from './mail.transport';
import { buildMessage } from './message.builder';
import { classifySendError } from './smtp-errors';

export interface MailDeps {
  db: Knex;
  clock: Clock;
  transport: MailTransport;
  from: { header: string; mailbox: Mailbox };
}

export type MailOutcome = 'sent' | 'already-sent' | 'already-failed' | 'gone';

/**
 * One message: claim its delivery row, send, record. The row is the idempotency record,
 * so a re-run job (a retry, or a job taken over from a crashed worker) never sends a
 * message whose row says sent or failed.
 *
 * Crash between the server's "250 OK" and our "sent" commit: the row stays claimed, and
 * the re-run sends the message again (same Message-ID, same UID and SEQUENCE, which
 * calendar clients apply idempotently). We chose a possible duplicate in that window of
 * one local commit over a possibly lost message: a lost cancellation leaves a dead event
 * in someone's calendar. A crash at any earlier point of the send (before the server's
 * reply) delivers nothing, since SMTP servers drop a message whose DATA was not answered.
 */
export async function processMailJob(job: Job<MailJob & { meta?: JobMeta }>, deps: MailDeps, log: Logger): Promise<MailOutcome> {
  const { deliveryId } = job.data;
  const token = randomUUID();
  const claimed = await claim(deps.db, job.data, token, log);
  if (typeof claimed === 'string') return claimed;
  if (claimed.interruptedClaim) log.warn({ deliveryId }, 'an earlier attempt stopped mid-send; sending again');

  const message = buildMessage(job.data, deps.from, deps.clock.now().getTime());
  let messageId: string;
  try {
    ({ messageId } = await deps.transport.send(message, `d${deliveryId}-${job.data.kind}`));
  } catch (err) {
    const failure = classifySendError(err);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (failure.permanent || lastAttempt) {
      await markFailed(deps.db, deliveryId, token, failure.reply);
      log.warn({ deliveryId, reply: failure.reply, permanent: failure.permanent }, 'delivery failed');
      if (failure.permanent) throw new UnrecoverableError(failure.reply);
    } else {
      await releaseClaim(deps.db, deliveryId, token, failure.reply);
    }
    throw err;
  }
  await recordSent(deps.db, deliveryId, token, messageId, log);
  return 'sent';
}

/** The claim, or the reason there is nothing to send. */
async function claim(db: Knex, data: MailJob, token: string, log: Logger): Promise<Claim | Exclude<MailOutcome, 'sent'>> {
  let claimed = await claimDelivery(db, data.deliveryId, token);
  if (claimed) return claimed;
  let status = await deliveryStatus(db, data.deliveryId);
  if (status === undefined || status === 'queued') {
    // Queued by a transaction that had not committed at the claim (it may have since, or
    // may roll back): wait for it to end, then claim again.
    await waitForQueuingTransaction(db, data.eventId);
    claimed = await claimDelivery(db, data.deliveryId, token);
    if (claimed) return claimed;
    status = await deliveryStatus(db, data.deliveryId);
  }
  if (status === undefined) {
    log.info({ deliveryId: data.deliveryId }, 'delivery row never committed; nothing to send');
    return 'gone';
  }
  if (status === 'queued') throw new Error(`delivery ${data.deliveryId} could not be claimed`); // raced another attempt; retry
  return status === 'sent' ? 'already-sent' : 'already-failed';
}

/**
 * The message is out; recording it is what keeps it from going out again, so a brief
 * database hiccup is ridden out here rather than turned into a resend by a job retry.
 */
async function recordSent(db: Knex, deliveryId: number, token: string, messageId: string, log: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (!(await markSent(db, deliveryId, token, messageId))) log.warn({ deliveryId }, 'sent, but another attempt had taken the row over');
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      log.warn({ deliveryId, err: (err as Error).message }, 'could not record a sent message yet; retrying');
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 500 * attempt);
      });
    }
  }
}
