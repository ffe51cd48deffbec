import { parseMailbox } from '../../shared/config/mailbox';
import { DELIVERY_RECORDS, startRetention } from '../../shared/db/retention';
import { METRIC } from '../../shared/metrics/metrics';
import { advanceTurn } from '../../shared/mail/mail-fairness';
import { type MailJob, mailJob, type MailKind } from '../../shared/queues/mail.job';
import { QUEUES } from '../../shared/queues/queues';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { createWorker, type WorkerContext, type WorkerDefinition } from '../../shared/queues/worker';
import { accountMailWorker } from './account-mail';
import { type MailOutcome, processMailJob } from './mail.processor';
import { createMailTransport, type MailTransport } from './mail.transport';
import { layout } from './message.layout';
import { sendRate } from './send-rate';
import { SentRecorder } from './sent-recorder';
import { startReminderSweeper } from './reminders.sweep';

/**
 * The emails queue's worker: MAIL_CONCURRENCY jobs (batches of messages) at once over one
 * SMTP pool (or the outbox), at most MAIL_RATE_PER_SECOND messages across every mail
 * worker. A job whose worker stopped answering is taken over after WORKER_LOCK_MS.
 * Delivery records of events over DELIVERY_RETENTION_DAYS ago are pruned hourly, and due
 * email reminders are swept every REMINDER_SWEEP_MS (reminders.sweep.ts). Beside it, on
 * its own connection, runs the account-emails queue's worker (sign-in links, invitations
 * to a team: account-mail.ts), over the same transport.
 */
export function mailWorker(ctx: WorkerContext, transport: MailTransport = createMailTransport(ctx.config)): WorkerDefinition<MailJob, MailOutcome> {
  const { config } = ctx;
  const mailbox = parseMailbox(config.mailFrom);
  if (!mailbox) throw new Error('MAIL_FROM is not an address'); // config validation already refuses this
  const from = { header: config.mailFrom, mailbox };
  ctx.logger.info(transport.description, config.smtpUrl ? 'sending mail over SMTP' : `no SMTP_URL: writing mail to ${String(transport.description.outbox)}`);
  // The message layout is compiled now, once, not when the first job is waiting for it
  // (English's: other languages' on their first message).
  layout('en').catch((err: unknown) => ctx.logger.error({ err }, 'the message layout does not compile'));
  const recorder = new SentRecorder(ctx.db, ctx.logger);
  const rate = sendRate(ctx.redis, config.queuePrefix, config.mail.ratePerSecond, ctx.clock);
  const deliveries = ctx.metrics.counter(METRIC.emailDeliveries, 'Email messages by kind and outcome: sent, failed (for good), retry (will be tried again)', ['kind', 'outcome']);
  const countDelivery = (kind: MailKind, outcome: 'sent' | 'failed' | 'retry') => deliveries.inc({ kind, outcome });
  const retention = startRetention(ctx, DELIVERY_RECORDS, config.deliveryRetentionDays);
  const reminders = startReminderSweeper(ctx);
  const queueKey = `${config.queuePrefix}:${QUEUES.emails}`;
  const accountConnection = createRedis(config.redis, 'worker');
  accountConnection.on('error', (err) => ctx.logger.debug({ err: err.message }, 'redis (account mail) connection error'));
  const accounts = createWorker(accountMailWorker(transport, config.mailFrom), ctx, accountConnection);
  return {
    contract: mailJob,
    concurrency: config.mail.concurrency,
    process: (job, c, log) => {
      // The queue's now moves to this batch's turn, where idle teams' new mail starts (not
      // awaited: while Redis is away the job waits on its own commands, not on this one).
      void advanceTurn(c.redis, queueKey, job.opts.priority).catch((err: unknown) => log.debug({ err: (err as Error).message }, 'could not advance the mail turn'));
      return processMailJob(job, { db: c.db, clock: c.clock, transport, from, recorder, rate, countDelivery }, log);
    },
    close: async () => {
      await accounts.close();
      await closeRedis(accountConnection);
      await reminders.stop();
      await retention.stop();
      await transport.close();
    },
  };
}
