import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/**
 * Redis connections. Request-path connections (`client`) fail fast while Redis is away
 * (no offline queue), so a submission becomes a quick 503 instead of a hung request, and
 * try to reconnect at least every half second, so the 503s stop soon after Redis is back;
 * worker connections (`worker`) wait and retry for as long as it takes, as BullMQ needs.
 */
export function createRedis(url: string, role: 'client' | 'worker', extra: RedisOptions = {}): Redis {
  const base: RedisOptions = {
    connectionName: `calendar-${role}`,
    retryStrategy: role === 'client' ? (times) => Math.min(times * 100, 500) : (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  };
  const roleOpts: RedisOptions =
    role === 'client'
      ? // Many requests run concurrently here: commands from one turn of the event loop go out as one write.
        { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 2000, enableAutoPipelining: true }
      : { enableOfflineQueue: true, maxRetriesPerRequest: null };
  return new Redis(url, { ...base, ...roleOpts, ...extra });
}

/** True when the error means Redis is out of reach (as opposed to a bad command). */
export function isRedisUnavailableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; message?: string; code?: string };
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (e.code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(e.code)) return true;
  return /Stream isn't writeable|enableOfflineQueue|Connection is closed|Command timed out|connect ECONNREFUSED|READONLY|LOADING/i.test(
    e.message ?? '',
  );
}

/** Closes a connection, quickly even when the server is gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  } catch {
    // already closed
  }
  redis.disconnect();
}

/** Resolves once the connection is ready (a client without an offline queue rejects commands before that). */
export function whenReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error('redis not ready'));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
