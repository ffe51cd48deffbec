import type { Queue } from 'bullmq';
import { unavailable } from '../../../../shared/errors/app-error';
import type { Logger } from '../../../../shared/logging/logger';
import { isRedisUnavailableError, type Redis } from '../../../../shared/queues/redis';

interface Pending {
  name: string;
  data: object;
  jobId: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Adds jobs from concurrent requests in batches: whatever arrives in one turn of the event
 * loop (or the batch size) goes to Redis in one addBulk. Each request still waits for its
 * own job to be stored: its promise settles when the batch holding it does (a 503 if
 * Redis refuses).
 */
export class BatchAdder {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly queue: Queue,
    private readonly connection: Redis,
    private readonly logger: Logger,
    private readonly maxBatch = 500,
  ) {}

  add(name: string, data: object, jobId: string): Promise<void> {
    // A connection that is not ready would hold the batch until it is; answer now instead.
    if (this.connection.status !== 'ready') return Promise.reject(unavailable());
    return new Promise((resolve, reject) => {
      this.pending.push({ name, data, jobId, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    this.queue.addBulk(batch.map((p) => ({ name: p.name, data: p.data, opts: { jobId: p.jobId } }))).then(
      () => batch.forEach((p) => p.resolve()),
      (err: unknown) => {
        const gone = isRedisUnavailableError(err);
        this.logger.warn({ err: (err as Error).message, jobs: batch.length }, gone ? 'could not queue submissions: Redis unavailable' : 'could not queue submissions');
        batch.forEach((p) => p.reject(gone ? unavailable() : err));
      },
    );
  }
}
