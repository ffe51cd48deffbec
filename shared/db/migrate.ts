import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logging/logger';
import { migrations } from './migrations';

class ListedMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return migrations.map(([name]) => name);
  }
  getMigrationName(name: string): string {
    return name;
  }
  async getMigration(name: string): Promise<Knex.Migration> {
    const found = migrations.find(([n]) => n === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return found[1];
  }
}

/**
 * Runs pending migrations. Not safe to run twice at once on its own (knex creates its
 * tables without a lock and refuses, rather than waits, when its lock row is taken): run
 * it inside withMigrationLock.
 */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: new ListedMigrationSource() })) as [number, string[]];
  return applied;
}

// Any constant: advisory locks are per database, and only the migrations take this one.
const MIGRATION_LOCK_KEY = 4_721_066_311_920_517n;
/** How often a run waiting for another one's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 250;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * Runs fn holding a Postgres advisory lock of the database, on a connection of its own:
 * a second run waits for the first, then finds nothing left to do. The lock goes with the
 * session, so a runner that dies mid-way frees it. Every pod of a rollout migrates before
 * it starts (infra/k8s), so runs at once are the normal case, not a race to lose.
 */
export async function withMigrationLock<T>(databaseUrl: string, fn: () => Promise<T>, logger?: Logger): Promise<T> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: 'migrate-lock',
    // Waiting for another run's migrations must not be cut short by a role's default timeouts.
    options: '-c statement_timeout=0 -c lock_timeout=0',
    connectionTimeoutMillis: 5000,
  });
  await client.connect();
  try {
    const key = MIGRATION_LOCK_KEY.toString();
    const tryLock = async () => (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key])).rows[0].locked;
    if (!(await tryLock())) {
      logger?.info('waiting for another process to finish the migrations');
      // Asked again and again rather than waited for in one statement: a waiting statement
      // is an open transaction, and CREATE INDEX CONCURRENTLY in the run ahead (0024) waits
      // for every transaction older than its own to end, so the two would wait for each other.
      while (!(await tryLock())) await sleep(MIGRATION_LOCK_POLL_MS);
    }
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    }
  } finally {
    await client.end();
  }
}
