import type { Logger } from '../../../shared/logging/logger';
import { extractionFinishedChannel } from '../../../shared/queues/extraction.job';
import { closeRedis, createSubscriber, type RedisServer, type RedisTarget } from '../../../shared/queues/redis';

/**
 * Lets a request wait for its extraction (`?wait=N`) without polling Postgres: the worker
 * publishes each finished extraction's id, and this gateway's one subscriber connection
 * (opened on first use) wakes the requests waiting for it. After subscribing, the row is
 * read once, so a result that came before the subscription is not missed.
 */
export class ExtractionWaiter {
  private sub: RedisServer | null = null;
  private subscribed: Promise<void> | null = null;
  private readonly waiting = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(
    private readonly redis: RedisTarget,
    private readonly queuePrefix: string,
    private readonly logger: Logger,
  ) {}

  private subscription(): Promise<void> {
    if (!this.subscribed) {
      const sub = createSubscriber(this.redis, 'calendar-extraction-waiter');
      sub.on('error', (err) => this.logger.debug({ err: err.message }, 'extraction waiter connection error'));
      sub.on('message', (_channel: string, id: string) => this.wake(id));
      this.sub = sub;
      this.subscribed = sub.subscribe(extractionFinishedChannel(this.queuePrefix)).then(
        () => undefined,
        (err: Error) => {
          this.subscribed = null; // try again on the next wait
          throw err;
        },
      );
    }
    return this.subscribed;
  }

  private wake(id: string): void {
    for (const wake of this.waiting.get(id) ?? []) wake();
  }

  /**
   * Waits up to `timeoutMs` for the extraction `id` to finish. `read` returns the finished
   * extraction, or null while it is pending; the answer is what it last returned.
   */
  async wait<T>(id: string, timeoutMs: number, read: () => Promise<T | null>): Promise<T | null> {
    if (this.closed) return null;
    let wake: () => void = () => undefined;
    const woken = new Promise<boolean>((resolve) => (wake = () => resolve(true)));
    const set = this.waiting.get(id) ?? new Set();
    set.add(wake);
    this.waiting.set(id, set);
    const timer = { handle: undefined as NodeJS.Timeout | undefined };
    const expired = new Promise<boolean>((resolve) => {
      timer.handle = setTimeout(() => resolve(false), timeoutMs);
      timer.handle.unref();
    });
    try {
      const ready = await Promise.race([this.subscription().then(() => true), expired]);
      if (!ready) return null;
      const now = await read();
      if (now || !(await Promise.race([woken, expired]))) return now;
      return await read();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, extraction: id }, 'could not wait for an extraction');
      return null;
    } finally {
      clearTimeout(timer.handle);
      set.delete(wake);
      if (!set.size) this.waiting.delete(id);
    }
  }

  /** Lets every waiting request answer now (202), e.g. when the gateway shuts down. */
  release(): void {
    this.closed = true;
    for (const id of [...this.waiting.keys()]) this.wake(id);
  }

  async close(): Promise<void> {
    this.release();
    if (this.sub) await closeRedis(this.sub);
    this.sub = null;
  }
}
