import { dropDatabase } from '../../shared/db/knex';

export default async function globalTeardown(): Promise<void> {
  if (process.env.TEST_DATABASE_URL && !process.env.KEEP_TEST_DB) await dropDatabase(process.env.TEST_DATABASE_URL);
  await globalThis.__TEST_SERVICES_STOP__?.();
}
