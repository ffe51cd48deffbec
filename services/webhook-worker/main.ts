import { runWorkerProcess } from '../../shared/queues/worker-process';
import { webhookWorker } from './webhook.worker';

/** Webhook worker process: relays due deliveries from the outbox and makes each signed attempt. */
runWorkerProcess('webhook-worker', (ctx) => webhookWorker(ctx)).catch((err) => {
  process.stderr.write(`webhook-worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
