import type { Logger } from '../logging/logger';
import { createDb, ensureDatabase } from './knex';
import { migrateLatest } from './migrate';

/** Creates the database when missing and runs pending migrations. Idempotent. */
export async function prepareDatabase(databaseUrl: string, logger?: Logger): Promise<void> {
  if (await ensureDatabase(databaseUrl)) logger?.info('created the database');
  const db = createDb(databaseUrl, { poolMax: 1, applicationName: 'migrate' });
  try {
    const applied = await migrateLatest(db);
    if (applied.length) logger?.info({ migrations: applied }, 'applied migrations');
  } finally {
    await db.destroy();
  }
}
