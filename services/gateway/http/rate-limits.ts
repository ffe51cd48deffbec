import type { ServerResponse } from 'node:http';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from '../../../shared/queues/redis';

/**
 * While Redis is unreachable each gateway counts on its own, in memory, allowing this share
 * of each limit (at least one): with up to 1 / FALLBACK_SHARE gateways the service as a
 * whole is never looser than the shared limit (with G gateways: at most G × share × limit).
 */
const FALLBACK_SHARE = 0.25;

/** At most this many addresses' outage counts are kept to carry into Redis (the oldest go first). */
const MAX_OWED = 100_000;

/**
 * A limit shared by every gateway process through Redis (rate-limiter-flexible). While Redis
 * is unreachable the process falls back to a stricter window of its own (FALLBACK_SHARE of
 * the limit), so the service keeps answering instead of failing closed, and what a key used
 * meanwhile is added to its shared count when Redis answers again: the end of an outage
 * never starts a window over.
 */
export class SharedLimiter {
  private readonly shared: RateLimiterRedis;
  private readonly local: RateLimiterMemory;
  /** Points each key was allowed while Redis was away, until they reach Redis (or their window ends). */
  private readonly owed = new Map<string, { points: number; untilMs: number }>();

  constructor(
    redis: Redis,
    private readonly opts: { keyPrefix: string; points: number; durationSeconds: number; blockSeconds?: number },
  ) {
    const window = { points: opts.points, duration: opts.durationSeconds, blockDuration: opts.blockSeconds ?? 0 };
    this.shared = new RateLimiterRedis({ storeClient: redis, keyPrefix: opts.keyPrefix, rejectIfRedisNotReady: true, ...window });
    this.local = new RateLimiterMemory({ ...window, points: Math.max(1, Math.floor(opts.points * FALLBACK_SHARE)) });
  }

  /** Counts one point: the window's state, or throws it (a RateLimiterRes) past the limit. */
  async consume(key: string): Promise<RateLimiterRes> {
    const owed = this.owedBy(key);
    try {
      const state = await this.shared.consume(key, 1 + owed);
      this.owed.delete(key);
      return state;
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        // Counted in Redis all the same (it counts a refused point too).
        this.owed.delete(key);
        throw err;
      }
      const state = await this.local.consume(key);
      this.owe(key, 1);
      return state;
    }
  }

  /** Gives a point back (the attempt was right after all), wherever it was counted. */
  async reward(key: string): Promise<void> {
    const owed = this.owedBy(key);
    if (owed > 0) {
      this.owe(key, -1);
      await this.local.reward(key);
      return;
    }
    try {
      await this.shared.reward(key);
    } catch {
      await this.local.reward(key);
    }
  }

  private owedBy(key: string): number {
    const entry = this.owed.get(key);
    if (!entry) return 0;
    if (entry.untilMs > Date.now()) return entry.points;
    this.owed.delete(key);
    return 0;
  }

  /** Adds `points` (-1 from reward, only while some are owed) to what `key` owes; an entry of 0 owes nothing. */
  private owe(key: string, points: number): void {
    const total = this.owedBy(key) + points;
    this.owed.delete(key);
    if (this.owed.size >= MAX_OWED) this.owed.delete(this.owed.keys().next().value as string);
    this.owed.set(key, { points: total, untilMs: Date.now() + this.opts.durationSeconds * 1000 });
  }
}

export function sharedLimiter(redis: Redis, opts: { keyPrefix: string; points: number; durationSeconds: number; blockSeconds?: number }): SharedLimiter {
  return new SharedLimiter(redis, opts);
}

/**
 * Counts one point against `key`: the window's state after it, and whether that went past
 * the limit. Anything else the limiter throws (no Redis and no insurance) propagates.
 */
export async function consumePoint(limiter: SharedLimiter, key: string): Promise<{ state: RateLimiterRes; over: boolean }> {
  try {
    return { state: await limiter.consume(key), over: false };
  } catch (err) {
    if (err instanceof RateLimiterRes) return { state: err, over: true };
    throw err;
  }
}

/** X-RateLimit-Limit / -Remaining, and Retry-After when `res` is over the limit. */
export function rateLimitHeaders(res: Pick<ServerResponse, 'setHeader'>, limit: number, state: RateLimiterRes, over: boolean): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  if (over) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))));
}

/** One limit to count a request against: `perMinute` null means none (an unlimited plan). */
export interface LimitCheck {
  /** What is limited (`api-token`, `api-team`, `extraction`, `smart-link`): one window per scope and key. */
  scope: string;
  key: string | number;
  perMinute: number | null;
}

/** The answer for a request counted against one or more limits. */
export interface LimitVerdict {
  over: boolean;
  /** The limit the headers report: the one that refused, else the one closest to its end. */
  limit: number;
  remaining: number;
  retryAfterSeconds: number;
}

/**
 * Per-plan limits, per minute. The numbers come from the caller's plan, so one limiter is
 * kept per scope and number (plans have few distinct values). A request is counted against
 * every limit that applies, in one round trip (the consumes go out together); a plan with
 * no limit costs nothing.
 */
export class PlanRateLimits {
  private readonly limiters = new Map<string, SharedLimiter>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Counts one request against each check; null when none of them limits anything. */
  async take(checks: LimitCheck[]): Promise<LimitVerdict | null> {
    const limited = checks.filter((c): c is LimitCheck & { perMinute: number } => c.perMinute !== null);
    if (!limited.length) return null;
    const states = await Promise.all(
      limited.map((c) => consumePoint(this.limiter(c.scope, c.perMinute), String(c.key)).then(({ state, over }) => ({ check: c, state, over }))),
    );
    const refused = states.filter((s) => s.over).sort((a, b) => b.state.msBeforeNext - a.state.msBeforeNext)[0];
    const shown = refused ?? states.reduce((a, b) => (b.state.remainingPoints < a.state.remainingPoints ? b : a));
    return {
      over: refused !== undefined,
      limit: shown.check.perMinute,
      remaining: Math.max(0, shown.state.remainingPoints),
      retryAfterSeconds: Math.max(1, Math.ceil(shown.state.msBeforeNext / 1000)),
    };
  }

  private limiter(scope: string, perMinute: number): SharedLimiter {
    const id = `${scope}:${perMinute}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = sharedLimiter(this.redis, { keyPrefix: `${this.prefix}:rl:${scope}`, points: perMinute, durationSeconds: 60 });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

/** The verdict's headers: X-RateLimit-Limit / -Remaining always, Retry-After when over. */
export function verdictHeaders(res: Pick<ServerResponse, 'setHeader'>, verdict: LimitVerdict): void {
  res.setHeader('X-RateLimit-Limit', String(verdict.limit));
  res.setHeader('X-RateLimit-Remaining', String(verdict.remaining));
  if (verdict.over) res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
}

export { RateLimiterRes };
