import { randomBytes } from 'node:crypto';
import { ensureDatabase } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';
import { resolveTestServices } from './services';

declare global {
  var __TEST_SERVICES_STOP__: (() => Promise<void>) | undefined;
}

/**
 * One database and one queue prefix per test run, so runs never see each other's data and
 * two runs can go at once on one machine.
 */
export default async function globalSetup(): Promise<void> {
  const services = await resolveTestServices();
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(services.postgresUrl);
  url.pathname = `/calendar_test_${runId}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  await prepareDatabase(databaseUrl);

  process.env.TEST_RUN_ID = runId;
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_REDIS_URL = services.redisUrl;
  process.env.TEST_QUEUE_PREFIX = `{test_${runId}}`;
  globalThis.__TEST_SERVICES_STOP__ = services.stop;
}
