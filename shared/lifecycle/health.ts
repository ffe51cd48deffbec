import type { Knex } from '../db/knex';
import { probeRedis, type Redis, whenReady } from '../queues/redis';

const CHECK_TIMEOUT_MS = 2000;

type CheckState = 'ok' | 'unavailable';

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

/** What the launcher is told over IPC when a service it started is ready. */
export interface ReadyMessage {
  type: 'ready';
  service: string;
}

/**
 * Watches readiness from the start until it first holds, then says so: one info line, and
 * a message to the parent process when there is one (`npm start` prints one plain "Ready"
 * line once every service has sent it). While not ready after a few seconds, one warning
 * line says which dependency is missing, naming its setting and address (again only when
 * that changes), instead of a retry error every second.
 */
export function announceReadiness(o: {
  service: string;
  check: () => Promise<Readiness>;
  logger: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void };
  describe: { postgres: string; redis: string };
  pollMs?: number;
  warnAfterMs?: number;
}): () => void {
  const started = Date.now();
  let said = '';
  let timer: NodeJS.Timeout | null = null;
  const poll = async () => {
    timer = null;
    let state: Readiness | null = null;
    try {
      state = await o.check();
    } catch {
      state = null;
    }
    if (state?.ready) {
      o.logger.info({}, `${o.service} ready`);
      if (process.send) process.send({ type: 'ready', service: o.service } satisfies ReadyMessage);
      return;
    }
    const missing = state ? (['postgres', 'redis'] as const).filter((k) => state.body.checks[k] !== 'ok').map((k) => o.describe[k]) : [];
    const line = missing.length ? `not ready: ${missing.join('; ')}; retrying` : '';
    if (line && line !== said && Date.now() - started >= (o.warnAfterMs ?? 5000)) {
      said = line;
      o.logger.warn({}, line);
    }
    timer = setTimeout(() => void poll(), o.pollMs ?? 500);
    timer.unref();
  };
  void poll();
  return () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
