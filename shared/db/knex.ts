import { createHash } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logging/logger';

export type { Knex };

// Timestamps stay strings so microseconds survive (created_at is shown with them); counts
// and ids (int8) become numbers: ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (v) => v);
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

interface DbOptions {
  poolMax?: number;
  /** Where knex's own warnings go (pool connection errors while Postgres is away, at debug). */
  logger?: Logger;
  /** Cancels any statement running longer than this (ms). */
  statementTimeoutMs?: number;
  applicationName?: string;
}

export function createDb(databaseUrl: string, opts: DbOptions = {}): Knex {
  const statementTimeout = opts.statementTimeoutMs ?? 15000;
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      application_name: opts.applicationName ?? 'calendar-service',
      options: `-c TimeZone=UTC -c statement_timeout=${statementTimeout}`,
      connectionTimeoutMillis: 5000,
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: opts.poolMax ?? 10, acquireTimeoutMillis: 5000, idleTimeoutMillis: 30000 },
    acquireConnectionTimeout: 5000,
    log: {
      warn: (message: unknown) => opts.logger?.debug({ knex: String(message) }, 'knex warning'),
      error: (message: unknown) => opts.logger?.warn({ knex: String(message) }, 'knex error'),
      deprecate: (message: unknown) => opts.logger?.debug({ knex: String(message) }, 'knex deprecation'),
      debug: () => undefined,
    },
  });
}

const statementNames = new Map<string, string>();

/**
 * `sql` as a named prepared statement: Postgres parses and plans it once per pooled
 * connection instead of on every call. For a hot statement whose plan does not depend on
 * its values (an insert by key), never for a search. The name comes from the text (pg
 * refuses one name for two texts), remembered per text.
 */
export function preparedRaw(db: Knex, sql: string, bindings: readonly Knex.RawBinding[]): Knex.Raw {
  let name = statementNames.get(sql);
  if (!name) {
    name = `p_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return db.raw(sql, bindings).options({ name });
}

/** Creates the database named in the URL when it does not exist yet. Safe to race. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: adminUrl.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      // Another process created it between our check and our CREATE: 42P04 when it had
      // finished, 23505 (pg_database's unique name index) when both CREATEs ran at once.
      const code = (err as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** True when the error means Postgres is out of reach, not that the query was wrong. */
export function isDbUnavailableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: string; name?: string; message?: string };
  if (e.code && CONNECTION_ERROR_CODES.has(e.code)) return true;
  // 08xxx connection exceptions, 57P01-03 shutdown / cannot connect now, 53300 too many connections
  if (e.code && (/^08/.test(e.code) || /^57P0[123]$/.test(e.code) || e.code === '53300')) return true;
  if (e.name === 'KnexTimeoutError') return true;
  const msg = e.message ?? '';
  return /Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect/i.test(msg);
}
