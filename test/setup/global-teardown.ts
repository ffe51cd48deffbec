import { dropDatabase } from '../../shared/db/knex';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { dropPrefix } from '../helpers/service-processes';
import { writeFaultSummary } from '../helpers/fault-summary';

export default async function globalTeardown(): Promise<void> {
  // The fault tests' figures, once, after jest's own results (also in test-artifacts/faults-summary.md).
  const summary = process.env.TEST_RUN_ID ? writeFaultSummary(process.env.TEST_RUN_ID) : null;
  if (summary) process.stdout.write(`\n${summary}\n`);
  if (process.env.TEST_DATABASE_URL && !process.env.KEEP_TEST_DB) await dropDatabase(process.env.TEST_DATABASE_URL);
  // Every queue and counter of the run is under `{test_<run id>`: the run prefix and each
  // file's isolatedPrefix. Removed, so runs on one Redis do not pile up keys.
  if (process.env.TEST_REDIS_URL && process.env.TEST_RUN_ID && !process.env.KEEP_TEST_DB) {
    const redis = createRedis(process.env.TEST_REDIS_URL, 'worker');
    try {
      await dropPrefix(redis, `{test_${process.env.TEST_RUN_ID}`);
    } finally {
      await closeRedis(redis);
    }
  }
  await globalThis.__TEST_SERVICES_STOP__?.();
}
