import type { Logger } from '../../shared/logging/logger';

/**
 * Counts that many requests bump (uses of a dynamic link, syncs of a feed, events created by
 * teams without a limit): added up in
 * memory and written in one statement every few seconds instead of an UPDATE per request.
 * A crash loses at most one interval of counts; shutdown flushes what is pending.
 */
export class BatchedCounter<K extends string | number = number> {
  private pending = new Map<K, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (increments: Array<[key: K, by: number]>) => Promise<void>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  add(id: K, by = 1): void {
    this.pending.set(id, (this.pending.get(id) ?? 0) + by);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes what is pending; concurrent calls queue behind each other. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending.entries()];
    this.pending = new Map();
    this.flushing = this.flushing.then(async () => {
      if (!batch.length) return;
      try {
        await this.write(batch);
      } catch (err) {
        // Put them back so the next flush tries again.
        for (const [id, by] of batch) this.pending.set(id, (this.pending.get(id) ?? 0) + by);
        this.logger.warn({ err, rows: batch.length }, 'could not write counters; will retry');
        if (!this.timer) {
          this.timer = setTimeout(() => void this.flush(), this.intervalMs);
          this.timer.unref();
        }
      }
    });
    return this.flushing;
  }
}
