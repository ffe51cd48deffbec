import type { Logger } from '../logging/logger';
import { createDb, ensureDatabase } from './knex';
import { migrateLatest, withMigrationLock } from './migrate';

/** Creates the database when missing and runs pending migrations. Idempotent, and safe to run from many processes at once. */
export async function prepareDatabase(databaseUrl: string, logger?: Logger): Promise<void> {
  if (await ensureDatabase(databaseUrl)) logger?.info('created the database');
  const db = createDb(databaseUrl, { poolMax: 1, applicationName: 'migrate' });
  try {
    const applied = await withMigrationLock(databaseUrl, () => migrateLatest(db), logger);
    if (applied.length) logger?.info({ migrations: applied }, 'applied migrations');
  } finally {
    await db.destroy();
  }
}
