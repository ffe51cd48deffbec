import type { Worker } from 'bullmq';
import { loadConfigOrExit } from '../config/config';
import { createDb } from '../db/knex';
import { systemClock } from '../lifecycle/clock';
import { Lifecycle } from '../lifecycle/lifecycle';
import { createLogger } from '../logging/logger';
import { closeRedis, createRedis } from './redis';
import { createWorker, type WorkerContext, type WorkerDefinition } from './worker';

/**
 * The process around one queue's worker: config, logs, pools, and an orderly shutdown on
 * SIGTERM/SIGINT (stop taking jobs and let the active ones finish, then close the pools;
 * force-exit after SHUTDOWN_TIMEOUT_MS). A job cut off by a crash is taken again once its
 * lock expires, which is why every processor is idempotent.
 */
export async function runWorkerProcess<T, R>(
  service: string,
  define: (ctx: WorkerContext) => WorkerDefinition<T, R> | Promise<WorkerDefinition<T, R>>,
): Promise<{ worker: Worker<T, R>; ctx: WorkerContext }> {
  const config = loadConfigOrExit();
  const logger = createLogger(service, config.logLevel);
  const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
  lifecycle.installSignalHandlers();

  const db = createDb(config.databaseUrl, { poolMax: config.dbPoolMax, applicationName: service, logger });
  lifecycle.onShutdown('postgres', () => db.destroy());
  const redis = createRedis(config.redisUrl, 'client');
  redis.on('error', (err) => logger.debug({ err: err.message }, 'redis connection error'));
  lifecycle.onShutdown('redis', () => closeRedis(redis));
  const workerConnection = createRedis(config.redisUrl, 'worker');
  workerConnection.on('error', (err) => logger.debug({ err: err.message }, 'redis (worker) connection error'));
  lifecycle.onShutdown('redis-worker', () => closeRedis(workerConnection));

  const ctx: WorkerContext = { config, db, logger, clock: systemClock, redis };
  const def = await define(ctx);
  if (def.close) lifecycle.onShutdown('worker-resources', def.close);
  const worker = createWorker(def, ctx, workerConnection);
  lifecycle.onShutdown('worker', () => worker.close());
  logger.info({ queue: def.contract.queue, concurrency: def.concurrency }, `${service} started`);
  return { worker, ctx };
}
