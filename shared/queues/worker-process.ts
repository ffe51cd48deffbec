import { Queue, type Worker } from 'bullmq';
import { loadConfigOrExit } from '../config/config';
import { createDb } from '../db/knex';
import { systemClock } from '../lifecycle/clock';
import { announceReadiness, readiness } from '../lifecycle/health';
import { Lifecycle } from '../lifecycle/lifecycle';
import { waitingFor } from '../lifecycle/reachability';
import { createLogger } from '../logging/logger';
import { startOpsServer } from '../lifecycle/ops-server';
import { Metrics } from '../metrics/metrics';
import { queueDepthGauge } from '../metrics/queue-metrics';
import { closeRedis, createRedis, warnUnlessNoEviction } from './redis';
import { createWorker, type WorkerContext, type WorkerDefinition } from './worker';

/**
 * The process around one queue's worker: config, logs, pools, metrics, a small HTTP server
 * on PORT (/healthz, /readyz, /metrics), and an orderly shutdown on
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
  const redis = createRedis(config.redis, 'client');
  redis.on('error', (err) => logger.debug({ err: err.message }, 'redis connection error'));
  warnUnlessNoEviction(redis, logger);
  const metrics = new Metrics(service, { processMetrics: true });
  const started: { worker?: Worker<T, R> } = {};
  // Registered first, so it closes last (shutdown runs in reverse): while the worker drains,
  // /healthz still answers and /readyz says 503.
  const ops = await startOpsServer({
    port: config.port,
    host: config.host,
    db,
    redis,
    queuePrefix: config.queuePrefix,
    metrics,
    metricsToken: config.metricsToken,
    isShuttingDown: () => lifecycle.isShuttingDown,
    isRunning: () => started.worker?.isRunning() ?? false,
  });
  lifecycle.onShutdown('http', () => ops.close());
  lifecycle.onShutdown('postgres', () => db.destroy());
  lifecycle.onShutdown('redis', () => closeRedis(redis));
  const workerConnection = createRedis(config.redis, 'worker');
  workerConnection.on('error', (err) => logger.debug({ err: err.message }, 'redis (worker) connection error'));
  lifecycle.onShutdown('redis-worker', () => closeRedis(workerConnection));

  const ctx: WorkerContext = { config, db, logger, clock: systemClock, redis, metrics };
  const def = await define(ctx);
  if (def.close) lifecycle.onShutdown('worker-resources', def.close);
  const queue = new Queue(def.contract.queue, { connection: redis, prefix: config.queuePrefix });
  queue.on('error', () => undefined); // the connection's own handler logs
  lifecycle.onShutdown('queue', () => queue.close());
  queueDepthGauge(metrics, () => [queue]);
  const running = createWorker(def, ctx, workerConnection);
  started.worker = running;
  lifecycle.onShutdown('worker', () => running.close());
  logger.info({ queue: def.contract.queue, concurrency: def.concurrency, port: ops.port }, `${service} started`);
  const stopAnnouncing = announceReadiness({
    service,
    check: () => readiness(db, redis, config.queuePrefix, () => lifecycle.isShuttingDown || !running.isRunning()),
    logger,
    describe: waitingFor(config),
  });
  lifecycle.onShutdown('readiness', stopAnnouncing);
  return { worker: running, ctx };
}
