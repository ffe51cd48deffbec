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

/** X-RateLimit-Limit / -Remaining, and Retry-After when `res` is over the limit. */
export function rateLimitHeaders(res: Pick<ServerResponse, 'setHeader'>, limit: number, state: RateLimiterRes, over: boolean): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  if (over) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))));
}

export { RateLimiterRes };
