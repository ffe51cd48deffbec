import { runWorkerProcess } from '../../shared/queues/worker-process';
import { smartLinkWorker } from './smart-link.worker';

/** Smart-link worker process: queued submissions become events, written in batches. */
runWorkerProcess('smart-link-worker', smartLinkWorker).catch((err) => {
  process.stderr.write(`smart-link worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
