interface Waiter {
  rank: number;
  since: number;
  timer: NodeJS.Timeout | null;
  wake: (turn: boolean) => void;
}

/** One endpoint's turns: those taken, the attempts waiting (oldest job first) and the jobs sending to it. */
interface Turns {
  taken: number;
  waiting: Waiter[];
  /** When an attempt to it last ended. */
  freedAt: number;
  jobs: Set<number>;
}

/**
 * At most `limit` attempts at once per endpoint (its origin), handed to the oldest job first
 * (the lowest rank): a job's attempts go out together, and it finishes and records while the
 * next job sends, rather than all of an endpoint's jobs advancing in step, finishing together
 * and leaving the endpoint idle while they record.
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
    if (!e) this.endpoints.set(origin, (e = { taken: 0, waiting: [], freedAt: 0, jobs: new Set() }));
    return e;
  }

  private forget(origin: string, e: Turns): void {
    if (e.taken <= 0 && !e.waiting.length && !e.jobs.size) this.endpoints.delete(origin);
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

  /** A turn for an attempt of the job of this rank (lower: older, served first); false when the endpoint stalls. */
  async take(origin: string, rank: number): Promise<boolean> {
    const e = this.of(origin);
    if (e.taken < this.limit) {
      e.taken++;
      return true;
    }
    return new Promise((resolve) => {
      const w: Waiter = { rank, since: Date.now(), timer: null, wake: resolve };
      let at = e.waiting.length;
      while (at > 0 && e.waiting[at - 1].rank > rank) at--;
      e.waiting.splice(at, 0, w);
      const stallsAt = () => Math.max(e.freedAt, w.since) + this.stallMs;
      // Decided after the I/O that is ready is read (setImmediate): a worker that was itself
      // held up (a GC pause, a busy machine) sees the answers that came meanwhile first.
      const decide = () => {
        if (!e.waiting.includes(w)) return;
        const left = stallsAt() - Date.now();
        if (left > 0) {
          w.timer = setTimeout(check, left);
          return;
        }
        e.waiting.splice(e.waiting.indexOf(w), 1);
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
    if (!e) return;
    e.freedAt = Date.now();
    const next = e.waiting.shift();
    if (next) {
      if (next.timer) clearTimeout(next.timer);
      next.wake(true); // the turn is handed over: `taken` stays as it is
      return;
    }
    e.taken--;
    this.forget(origin, e);
  }
}
