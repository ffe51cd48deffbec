import { loadConfigOrExit } from '../../shared/config/config';
import { createDb } from '../../shared/db/knex';
import { announceReadiness, readiness } from '../../shared/lifecycle/health';
import { Lifecycle } from '../../shared/lifecycle/lifecycle';
import { waitingFor } from '../../shared/lifecycle/reachability';
import { systemClock } from '../../shared/lifecycle/clock';
import { createLogger } from '../../shared/logging/logger';
import { Metrics } from '../../shared/metrics/metrics';
import { closeRedis, createRedis, warnUnlessNoEviction } from '../../shared/queues/redis';
import { buildApp } from './app';
import { listen } from './server';

/** Gateway process: the HTTP API and public pages. Run migrations first (npm start does). */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger('gateway', config.logLevel);
  if (config.appKeyIsDefault) logger.warn('APP_KEY is not set: using the development key; set APP_KEY in production');
  const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
  lifecycle.installSignalHandlers();

  const db = createDb(config.databaseUrl, { poolMax: config.dbPoolMax, applicationName: 'gateway', logger });
  lifecycle.onShutdown('postgres', () => db.destroy());
  const redis = createRedis(config.redis, 'client');
  redis.on('error', (err) => logger.debug({ err: err.message }, 'redis connection error'));
  warnUnlessNoEviction(redis, logger);
  lifecycle.onShutdown('redis', () => closeRedis(redis));

  const metrics = new Metrics('gateway', { processMetrics: true });
  const built = buildApp({ config, db, redis, logger, clock: systemClock, metrics }, { isShuttingDown: () => lifecycle.isShuttingDown });
  lifecycle.onShutdown('app', () => built.close());
  const server = await listen(built.handler, config.port, {
    host: config.host,
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
  });
  lifecycle.onShutdown('http', () =>
    server.closeGracefully({
      // Connections a client still holds open are cut in time for the steps after this one
      // (the app, Redis, Postgres) to close before the shutdown is forced.
      forceAfterMs: Math.max(0, lifecycle.remainingMs() - Math.min(3000, config.shutdownTimeoutMs / 3)),
      onForce: () => logger.warn('connections still open at the shutdown deadline: closing them'),
    }),
  );
  // Runs before the HTTP server closes (reverse order): requests waiting for an extraction answer 202 now.
  lifecycle.onShutdown('waits', () => built.releaseWaits());
  logger.info({ url: config.publicBaseUrl, port: server.port }, `gateway listening on ${config.publicBaseUrl}`);
  const stopAnnouncing = announceReadiness({
    service: 'gateway',
    check: () => readiness(db, redis, config.queuePrefix, () => lifecycle.isShuttingDown),
    logger,
    describe: waitingFor(config),
  });
  lifecycle.onShutdown('readiness', stopAnnouncing);
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
