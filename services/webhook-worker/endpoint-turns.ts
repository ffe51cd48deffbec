interface Waiter {
  rank: number;
  since: number;
  timer: NodeJS.Timeout | null;
  wake: (turn: boolean) => void;
}

/** One endpoint's turns: the attempts in flight, those waiting (oldest job first) and the jobs sending to it. */
interface Turns {
  inFlight: number;
  waiting: Waiter[];
  /** When an attempt to it last ended. */
  freedAt: number;
  jobs: Set<number>;
}

/**
 * At most `limit` attempts in flight at once per endpoint (its origin), across all the jobs
 * of the process: `inFlight` counts the turns taken and not given back, and a turn is taken
 * only while it is below the limit (a turn given back is counted off before the next waiter
 * is let in). Freed turns go to the oldest job first (the lowest rank): a job's attempts go
 * out together, and it finishes and records while the next job sends, rather than all of an
 * endpoint's jobs advancing in step, finishing together and leaving the endpoint idle while
 * they record.
 *
 * A slow endpoint's deliveries never fill the worker and hold up other endpoints': at most
 * `jobs` jobs send to one endpoint at a time (another gives its place in the worker up at
 * once), and an attempt waits for a turn only while the endpoint frees one at least every
 * `stallMs` (a fast endpoint frees one within milliseconds); else it gives its place up too.
 */
export class EndpointTurns {
  private readonly endpoints = new Map<string, Turns>();

  constructor(
    private readonly limit: number,
    private readonly jobs: number,
    private readonly stallMs: number,
  ) {}

  private of(origin: string): Turns {
    let e = this.endpoints.get(origin);
    if (!e) this.endpoints.set(origin, (e = { inFlight: 0, waiting: [], freedAt: 0, jobs: new Set() }));
    return e;
  }

  private forget(origin: string, e: Turns): void {
    if (e.inFlight <= 0 && !e.waiting.length && !e.jobs.size && this.endpoints.get(origin) === e) this.endpoints.delete(origin);
  }

  /** Attempts in flight to the endpoint now (for tests and metrics). */
  inFlight(origin: string): number {
    return this.endpoints.get(origin)?.inFlight ?? 0;
  }

  /** A place among the jobs sending to the endpoint, for the job of this rank; false when they are all taken. */
  join(origin: string, rank: number): boolean {
    const e = this.of(origin);
    if (!e.jobs.has(rank) && e.jobs.size >= this.jobs) {
      this.forget(origin, e);
      return false;
    }
    e.jobs.add(rank);
    return true;
  }

  leave(origin: string, rank: number): void {
    const e = this.endpoints.get(origin);
    if (!e) return;
    e.jobs.delete(rank);
    this.forget(origin, e);
  }

  /**
   * A turn for an attempt of the job of this rank (lower: older, served first); false when
   * the endpoint stalls. A true answer is one attempt in flight: give() it back once done.
   */
  take(origin: string, rank: number): Promise<boolean> {
    const e = this.of(origin);
    if (e.inFlight < this.limit && !e.waiting.length) {
      e.inFlight++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const w: Waiter = { rank, since: Date.now(), timer: null, wake: resolve };
      let at = e.waiting.length;
      while (at > 0 && e.waiting[at - 1].rank > rank) at--;
      e.waiting.splice(at, 0, w);
      // Decided after the I/O that is ready is read (setImmediate): a worker that was itself
      // held up (a GC pause, a busy machine) sees the answers that came meanwhile first.
      const decide = () => {
        const i = e.waiting.indexOf(w);
        if (i < 0) return; // let in meanwhile
        const left = Math.max(e.freedAt, w.since) + this.stallMs - Date.now();
        if (left > 0) {
          w.timer = setTimeout(check, left);
          return;
        }
        e.waiting.splice(i, 1);
        this.forget(origin, e);
        resolve(false);
      };
      const check = () => {
        w.timer = null;
        setImmediate(decide);
      };
      w.timer = setTimeout(check, this.stallMs);
    });
  }

  give(origin: string): void {
    const e = this.endpoints.get(origin);
    if (!e || e.inFlight <= 0) return; // not taken: nothing to give back
    e.inFlight--;
    e.freedAt = Date.now();
    while (e.inFlight < this.limit && e.waiting.length) {
      const next = e.waiting.shift() as Waiter;
      if (next.timer) clearTimeout(next.timer);
      e.inFlight++;
      next.wake(true);
    }
    this.forget(origin, e);
  }
}
