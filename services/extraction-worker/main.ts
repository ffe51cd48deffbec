import { runWorkerProcess } from '../../shared/queues/worker-process';
import { extractionWorker } from './extraction.worker';

/** Extraction worker process: reads queued free text into event fields. */
runWorkerProcess('extraction-worker', (ctx) => extractionWorker(ctx)).catch((err) => {
  process.stderr.write(`extraction-worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
