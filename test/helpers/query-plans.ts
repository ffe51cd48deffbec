import type { Knex } from '../../shared/db/knex';

/** A statement as knex sent it to Postgres: its text ($1, $2… placeholders) and values. */
export interface SentQuery {
  sql: string;
  bindings: unknown[];
}

/** Runs `fn` and answers, beside its result, every statement `db` sent meanwhile. */
export async function captureQueries<T>(db: Knex, fn: () => Promise<T>): Promise<{ result: T; queries: SentQuery[] }> {
  const queries: SentQuery[] = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => queries.push({ sql: q.sql, bindings: q.bindings ?? [] });
  db.on('query', listener);
  try {
    const result = await fn();
    return { result, queries };
  } finally {
    db.off('query', listener);
  }
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** What a statement read, from EXPLAIN (ANALYZE, BUFFERS). */
export interface PlanReads {
  /**
   * Table rows its scans fetched: for every scan of a table (sequential, index, index-only,
   * bitmap heap), the rows it returned plus those its filter or recheck threw away, times
   * its loops. A bitmap index scan's entries are counted once, as its heap scan's rows.
   */
  rows: number;
  /** Shared buffers the whole statement touched. */
  buffers: number;
  /** One line per scan counted, for the failure message. */
  scans: string[];
}

const TABLE_SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Tid Scan', 'Tid Range Scan']);

function collect(node: PlanNode, into: PlanReads): void {
  if (TABLE_SCANS.has(node['Node Type'])) {
    // EXPLAIN gives rows and removed rows per loop.
    const perLoop = node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
    const rows = Math.round(perLoop * node['Actual Loops']);
    into.rows += rows;
    into.scans.push(`${node['Node Type']} on ${node['Relation Name']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}: ${rows} rows`);
  }
  for (const child of node.Plans ?? []) collect(child, into);
}

/**
 * Runs the statement again under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON), text and values
 * unchanged; a statement that writes (`rollback`) runs in a transaction rolled back after.
 */
export async function explainReads(db: Knex, query: SentQuery, opts: { rollback?: boolean } = {}): Promise<PlanReads> {
  const connection = (await db.client.acquireConnection()) as { query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> };
  try {
    if (opts.rollback) await connection.query('BEGIN');
    const { rows } = await connection.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.sql}`, query.bindings).finally(() => (opts.rollback ? connection.query('ROLLBACK') : undefined));
    const [explained] = rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>;
    const reads: PlanReads = { rows: 0, buffers: (explained.Plan['Shared Hit Blocks'] ?? 0) + (explained.Plan['Shared Read Blocks'] ?? 0), scans: [] };
    collect(explained.Plan, reads);
    return reads;
  } finally {
    await db.client.releaseConnection(connection);
  }
}
