import { dropDatabase } from '../../shared/db/knex';
import { writeFaultSummary } from '../helpers/fault-summary';

export default async function globalTeardown(): Promise<void> {
  // The fault tests' figures, once, after jest's own results (also in test-artifacts/faults-summary.md).
  const summary = process.env.TEST_RUN_ID ? writeFaultSummary(process.env.TEST_RUN_ID) : null;
  if (summary) process.stdout.write(`\n${summary}\n`);
  if (process.env.TEST_DATABASE_URL && !process.env.KEEP_TEST_DB) await dropDatabase(process.env.TEST_DATABASE_URL);
  await globalThis.__TEST_SERVICES_STOP__?.();
}
