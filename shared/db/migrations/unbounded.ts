import type { Knex } from 'knex';

/**
 * Runs the statements on one connection with no statement timeout (the migration
 * connection's 15 s would cut an index build on a large table short), then restores it.
 */
export async function unbounded(knex: Knex, statements: string[]): Promise<void> {
  const connection = (await knex.client.acquireConnection()) as { query(sql: string): Promise<unknown> };
  try {
    await connection.query('SET statement_timeout = 0');
    for (const sql of statements) await connection.query(sql);
  } finally {
    try {
      await connection.query('RESET statement_timeout');
    } finally {
      await knex.client.releaseConnection(connection);
    }
  }
}
