import { deploymentOf } from '../../shared/db/deployment';
import { METRIC } from '../../shared/metrics/metrics';
import { inboundReplyJob } from '../../shared/queues/inbound-reply.job';
import { Producer } from '../../shared/queues/queues';
import { runWorkerProcess } from '../../shared/queues/worker-process';
import { inboundWorker } from './inbound.worker';
import { startInboundSmtp } from './smtp.server';

/**
 * Inbound-mail process: the SMTP server behind REPLY_DOMAIN's MX (INBOUND_SMTP_PORT),
 * which puts each reply or bounce on the inbound-replies queue, and that queue's worker,
 * which records them. The SMTP server closes after the worker has finished its jobs.
 */
runWorkerProcess('inbound-mail', async (ctx) => {
  const producer = new Producer(inboundReplyJob, ctx.redis, ctx.config.queuePrefix, ctx.logger, deploymentOf(ctx.db));
  const messages = ctx.metrics.counter(METRIC.inboundMessages, 'Messages and recipients the inbound SMTP server answered: queued (250), refused (5xx) or deferred (4xx)', ['outcome'] as const);
  const smtp = await startInboundSmtp({ config: ctx.config, db: ctx.db, producer, logger: ctx.logger, count: (outcome) => messages.inc({ outcome }) });
  if (!ctx.config.replyDomain) ctx.logger.warn('REPLY_DOMAIN is not set: invitations name the organizer, and every recipient here is refused');
  ctx.logger.info({ smtpPort: smtp.port, replyDomain: ctx.config.replyDomain }, 'inbound SMTP listening');
  return {
    ...inboundWorker(),
    close: async () => {
      await smtp.close();
      await producer.close();
    },
  };
}).catch((err) => {
  process.stderr.write(`inbound-mail failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
