import type { Worker } from 'bullmq';
import { loadConfig } from '../../shared/config/config';
import { createDb } from '../../shared/db/knex';
import { createLogger } from '../../shared/logging/logger';
import { Metrics } from '../../shared/metrics/metrics';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { createWorker, type WorkerContext, type WorkerDefinition } from '../../shared/queues/worker';
import { TestClock, testEnv } from './gateway';

export interface TestWorker<T, R> {
  worker: Worker<T, R>;
  ctx: WorkerContext;
  close(): Promise<void>;
}

/**
 * A queue's worker in the test process, against the run's database and Redis prefix (the
 * same ones startGateway uses), so a test can enqueue through the API and watch the row.
 */
export async function startWorker<T, R>(
  define: (ctx: WorkerContext) => WorkerDefinition<T, R> | Promise<WorkerDefinition<T, R>>,
  env: Record<string, string> = {},
): Promise<TestWorker<T, R>> {
  const config = loadConfig(testEnv(env));
  const db = createDb(config.databaseUrl, { poolMax: 5 });
  const redis = createRedis(config.redis, 'client');
  redis.on('error', () => undefined);
  const connection = createRedis(config.redis, 'worker');
  connection.on('error', () => undefined);
  const ctx: WorkerContext = { config, db, logger: createLogger('worker-test', config.logLevel), clock: new TestClock(), redis, metrics: new Metrics('worker-test') };
  const def = await define(ctx);
  const worker = createWorker(def, ctx, connection);
  await worker.waitUntilReady();
  return {
    worker,
    ctx,
    async close() {
      await worker.close();
      await def.close?.();
      await db.destroy();
      await Promise.all([closeRedis(redis), closeRedis(connection)]);
    },
  };
}
