import type { Knex } from '../db/knex';
import { probeRedis, type Redis, whenReady } from '../queues/redis';

const CHECK_TIMEOUT_MS = 2000;

export type CheckState = 'ok' | 'unavailable';

async function check(probe: () => Promise<unknown>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

export interface Readiness {
  ready: boolean;
  body: { status: CheckState; checks: { postgres: CheckState; redis: CheckState } };
}

/**
 * Readiness of any service: Postgres and Redis answer (each within 2 s), and the process is
 * not shutting down (a load balancer or Kubernetes stops sending it work). On a cluster,
 * Redis answers when the master serving the queues' slot (the prefix's) does.
 */
export async function readiness(db: Knex, redis: Redis, queuePrefix: string, isShuttingDown: () => boolean): Promise<Readiness> {
  const [postgres, redisState] = await Promise.all([
    check(() => db.raw('SELECT 1')),
    check(async () => {
      await whenReady(redis, CHECK_TIMEOUT_MS);
      await probeRedis(redis, queuePrefix);
    }),
  ]);
  const ready = postgres === 'ok' && redisState === 'ok' && !isShuttingDown();
  return { ready, body: { status: ready ? 'ok' : 'unavailable', checks: { postgres, redis: redisState } } };
}
