import type { ServerResponse } from 'node:http';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from '../../../shared/queues/redis';

/**
 * Limits shared by every gateway process through Redis (rate-limiter-flexible). While Redis
 * is unreachable each process falls back to an in-memory limiter with the same numbers, so
 * the service keeps answering instead of failing closed.
 */
export function sharedLimiter(redis: Redis, opts: { keyPrefix: string; points: number; durationSeconds: number; blockSeconds?: number }) {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: opts.keyPrefix,
    points: opts.points,
    duration: opts.durationSeconds,
    blockDuration: opts.blockSeconds ?? 0,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points: opts.points, duration: opts.durationSeconds, blockDuration: opts.blockSeconds ?? 0 }),
  });
}

/**
 * Counts one point against `key`: the window's state after it, and whether that went past
 * the limit. Anything else the limiter throws (no Redis and no insurance) propagates.
 */
export async function consumePoint(limiter: RateLimiterRedis, key: string): Promise<{ state: RateLimiterRes; over: boolean }> {
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
  private readonly limiters = new Map<string, RateLimiterRedis>();

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

  private limiter(scope: string, perMinute: number): RateLimiterRedis {
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
