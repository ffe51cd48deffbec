import pg from 'pg';
import type { Config } from '../config/config';
import { closeRedis, createRedis, isRedisUnavailableError, type RedisTarget } from '../queues/redis';

/**
 * What a person reads when Postgres or Redis cannot be reached: one line naming the setting
 * and the address (never its password), instead of a stack trace or a stream of retries.
 */

/** host:port, for a URL with or without credentials; a cluster's seeds joined. */
function addressOf(target: string | RedisTarget): string {
  const urls = typeof target === 'string' ? [target] : target.cluster;
  return urls
    .map((u) => {
      try {
        const url = new URL(u);
        return `${url.hostname}:${url.port || (url.protocol.startsWith('postgres') ? 5432 : 6379)}`;
      } catch {
        return 'an address that is not a URL';
      }
    })
    .join(', ');
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'nothing is listening there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: 'no answer in time',
  ECONNRESET: 'the connection was cut',
  EHOSTUNREACH: 'the host cannot be reached',
  '28P01': 'the password was refused',
  '28000': 'the user may not connect',
  '3D000': 'the database does not exist',
};

function reasonOf(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: unknown[] };
  // Node reports a host with several addresses (localhost: ::1 and 127.0.0.1) as one AggregateError.
  const code = e.code ?? (e.errors?.[0] as { code?: string } | undefined)?.code;
  if (code && REASONS[code]) return REASONS[code];
  return (e.message ?? String(err)).split('\n')[0].slice(0, 200) || 'unknown error';
}

/** The line to print when Postgres failed with this error, or null when the error is something else (a bug). */
export function postgresProblem(err: unknown, databaseUrl: string): string | null {
  const e = err as { code?: string; errors?: unknown[]; message?: string };
  const code = e.code ?? (e.errors?.[0] as { code?: string } | undefined)?.code;
  const known = (code && REASONS[code]) || /timeout|Connection terminated/i.test(e.message ?? '');
  if (!known) return null;
  return `Cannot reach PostgreSQL at ${addressOf(databaseUrl)} (DATABASE_URL): ${reasonOf(err)}. Start it, or point DATABASE_URL at one.`;
}

/** Checks that Postgres answers (on its admin database, which exists wherever the server does). */
export async function checkPostgres(databaseUrl: string, timeoutMs = 3000): Promise<string | null> {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return postgresProblem(err, databaseUrl) ?? `PostgreSQL at ${addressOf(databaseUrl)} (DATABASE_URL) answered with an error: ${reasonOf(err)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Checks that Redis answers a PING within the time; the line to print when it does not. */
export async function checkRedis(config: Pick<Config, 'redis'>, timeoutMs = 3000): Promise<string | null> {
  const redis = createRedis(config.redis, 'client', { lazyConnect: true, retryStrategy: () => null, connectTimeout: timeoutMs, maxRetriesPerRequest: 0 });
  let last: unknown;
  redis.on('error', (err) => (last = err));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (err) {
    const cause = last ?? err;
    const setting = typeof config.redis === 'string' ? 'REDIS_URL' : 'REDIS_URL, REDIS_CLUSTER';
    const reason = isRedisUnavailableError(cause) || (cause as { code?: string }).code ? reasonOf(cause) : reasonOf(err);
    return `Cannot reach Redis at ${addressOf(config.redis)} (${setting}): ${reason}. Start it, or point REDIS_URL at one.`;
  } finally {
    await closeRedis(redis);
  }
}

/** How a service says, while it waits, that it cannot reach each dependency. */
export const waitingFor = (config: Pick<Config, 'databaseUrl' | 'redis'>) => ({
  postgres: `cannot reach PostgreSQL at ${addressOf(config.databaseUrl)} (DATABASE_URL)`,
  redis: `cannot reach Redis at ${addressOf(config.redis)} (REDIS_URL), or it refuses writes`,
});
