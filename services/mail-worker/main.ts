import { runWorkerProcess } from '../../shared/queues/worker-process';
import { mailWorker } from './mail.worker';

/** Mail worker process: sends the invitation, update and cancellation emails. */
runWorkerProcess('mail-worker', (ctx) => mailWorker(ctx)).catch((err) => {
  process.stderr.write(`mail-worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
