import type { Queue } from 'bullmq';
import { dropDatabase } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';
import { isCluster, type Redis } from '../../shared/queues/redis';
import { testEnv } from './gateway';
import { dist, freePort, spawnNode, type Spawned } from './processes';
import { waitFor } from './wait';

/**
 * The services as their own processes (the built entry points), for the fault tests that
 * kill them, cut them off from Postgres or take Redis away under them.
 */

/**
 * A queue prefix for one test file: its workers take only its own jobs, and its rate-limit
 * counters are its own. Under the run's id, so the run's teardown removes its keys and no
 * later run (a reused pid, a database whose ids start again at 1) finds them.
 */
export const isolatedPrefix = (name: string) => `{test_${process.env.TEST_RUN_ID ?? 'x'}_${name}}`;

/**
 * A database for one test file, migrated, beside the run's: for a file whose workers poll
 * Postgres for work of any team (the webhook worker's outbox relay), which in the run's
 * shared database would also take other files' work, and theirs this file's. Drop it after.
 */
export async function isolatedDatabase(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `${url.pathname}_${name}`;
  const databaseUrl = url.toString();
  await prepareDatabase(databaseUrl);
  return { url: databaseUrl, drop: () => dropDatabase(databaseUrl) };
}

/**
 * Every key matching `match`, a batch at a time. SCAN walks one server's keys: on a cluster
 * every master is walked (replicas hold copies of their master's keys).
 */
export async function* scanKeys(redis: Redis, match: string): AsyncGenerator<{ server: Redis; keys: string[] }> {
  for (const server of isCluster(redis) ? redis.nodes('master') : [redis]) {
    for await (const keys of server.scanStream({ match, count: 500 }) as AsyncIterable<string[]>) if (keys.length) yield { server, keys };
  }
}

/** Removes every Redis key under a prefix. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  for await (const { server, keys } of scanKeys(redis, `${prefix}*`)) {
    if (!isCluster(redis)) {
      await server.unlink(...keys);
      continue;
    }
    // A batch of one cluster node may hold keys of several slots, which one UNLINK refuses (CROSSSLOT).
    const pipeline = server.pipeline();
    for (const key of keys) pipeline.unlink(key);
    await pipeline.exec();
  }
}

export interface GatewayProcess extends Spawned {
  port: number;
  baseUrl: string;
}

export type WorkerKind = 'smart-link-worker' | 'extraction-worker' | 'mail-worker' | 'webhook-worker' | 'inbound-mail';

/** The gateway on `port` (a free one by default), once it answers /healthz. */
export async function spawnGateway(env: Record<string, string> = {}, port?: number): Promise<GatewayProcess> {
  const p = port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${p}`;
  const spawned = spawnNode(dist('gateway/main.js'), testEnv({ HOST: '127.0.0.1', PUBLIC_BASE_URL: baseUrl, ...env, PORT: String(p) }));
  await waitFor(
    async () => {
      if (spawned.proc.exitCode !== null) throw new Error(`the gateway exited: ${spawned.stderr()}`);
      return (await fetch(`${baseUrl}/healthz`)).ok;
    },
    { what: `the gateway on ${p}`, timeoutMs: 20_000 },
  );
  return { ...spawned, port: p, baseUrl };
}

export interface WorkerProcess extends Spawned {
  /** Its health server's port (/healthz, /readyz, /metrics). */
  port: number;
  /** The status of its /readyz. */
  readyz(): Promise<number>;
}

/**
 * A worker process, once it has started (it logs at info for that, with its port). PORT 0:
 * its health server takes any free port, so processes never collide.
 */
export async function spawnWorker(kind: WorkerKind, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const spawned = spawnNode(dist(`${kind}/main.js`), testEnv({ LOG_LEVEL: 'info', ...env, PORT: '0' }));
  const started = await waitFor(
    () => {
      if (spawned.proc.exitCode !== null) throw new Error(`${kind} exited: ${spawned.stderr()}`);
      return logLines(spawned, `${kind} started`)[0];
    },
    { what: `${kind} to start`, timeoutMs: 20_000 },
  );
  const port = Number(started.port);
  return { ...spawned, port, readyz: async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status };
}

/** SIGKILL: a crash, no shutdown code runs. */
export async function crash(spawned: Spawned): Promise<void> {
  if (spawned.proc.exitCode === null && spawned.proc.signalCode === null) spawned.proc.kill('SIGKILL');
  await spawned.exited;
}

/** The JSON log lines a process wrote (pino), for the ones with this message. */
export function logLines(spawned: Spawned, msg: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of spawned.stdout().split('\n')) {
    if (!line.includes(msg)) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.msg === msg) out.push(parsed);
    } catch {
      // a line cut short by a SIGKILL
    }
  }
  return out;
}

/** Nothing left to run: no job waiting, active, delayed or prioritized. */
export async function drained(queue: Queue): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children');
  return Object.values(counts).every((n) => n === 0);
}
