import { parseMailbox } from '../../shared/config/mailbox';
import { type MailJob, mailJob } from '../../shared/queues/mail-jobs';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { type MailOutcome, processMailJob } from './mail.processor';
import { createMailTransport, type MailTransport } from './mail.transport';
import { sendRate } from './send-rate';
import { SentRecorder } from './sent-recorder';

/**
 * The emails queue's worker: MAIL_CONCURRENCY jobs (batches of messages) at once over one
 * SMTP pool (or the outbox), at most MAIL_RATE_PER_SECOND messages across every mail
 * worker. A job whose worker stopped answering is taken over after WORKER_LOCK_MS.
 */
export function defineMailWorker(ctx: WorkerContext, transport: MailTransport = createMailTransport(ctx.config)): WorkerDefinition<MailJob, MailOutcome> {
  const { config } = ctx;
  const mailbox = parseMailbox(config.mailFrom);
  if (!mailbox) throw new Error('MAIL_FROM is not an address'); // config validation already refuses this
  const from = { header: config.mailFrom, mailbox };
  ctx.logger.info(transport.description, config.smtpUrl ? 'sending mail over SMTP' : `no SMTP_URL: writing mail to ${String(transport.description.outbox)}`);
  const recorder = new SentRecorder(ctx.db, ctx.logger);
  const rate = sendRate(ctx.redis, config.queuePrefix, config.mail.ratePerSecond, ctx.clock);
  return {
    contract: mailJob,
    concurrency: config.mail.concurrency,
    options: {
      // A crash loop must not turn queued messages into failed ones too soon.
      maxStalledCount: 5,
    },
    process: (job, c, log) => processMailJob(job, { db: c.db, clock: c.clock, transport, from, recorder, rate }, log),
    close: () => transport.close(),
  };
}
