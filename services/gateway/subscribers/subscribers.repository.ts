import type { Knex } from '../../../shared/db/knex';

export interface SubscriberRow {
  id: number;
  uid: string;
  feed_token: string;
  feed_token_hash: string;
  calendar_id: number;
  team_id: number;
  platform: string;
  name: string | null;
  email: string | null;
  status: 'active' | 'blocked';
  sync_count: number;
  last_synced_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = ['id', 'uid', 'feed_token', 'feed_token_hash', 'calendar_id', 'team_id', 'platform', 'name', 'email', 'status', 'sync_count', 'last_synced_at', 'created_at', 'updated_at'] as const;

export async function insertSubscriber(db: Knex, values: Partial<SubscriberRow>): Promise<SubscriberRow> {
  const [row] = await db('subscribers').insert(values).returning(COLUMNS);
  return row;
}

export const findByTokenHash = (db: Knex, hash: string): Promise<SubscriberRow | undefined> => db('subscribers').first(COLUMNS).where({ feed_token_hash: hash });

export const findSubscriber = (db: Knex, calendarId: number, uid: string): Promise<SubscriberRow | undefined> =>
  db('subscribers').first(COLUMNS).where({ calendar_id: calendarId, uid });

export function listSubscribers(db: Knex, calendarId: number, f: { status?: string; platform?: string; afterId?: number; limit: number }): Promise<SubscriberRow[]> {
  const q = db('subscribers').select(COLUMNS).where({ calendar_id: calendarId }).orderBy('id').limit(f.limit);
  if (f.status) q.where({ status: f.status });
  if (f.platform) q.where({ platform: f.platform });
  if (f.afterId) q.where('id', '>', f.afterId);
  return q;
}

export async function setStatus(db: Knex, id: number, status: 'active' | 'blocked'): Promise<SubscriberRow> {
  const [row] = await db('subscribers').where({ id }).update({ status, updated_at: db.fn.now() }).returning(COLUMNS);
  return row;
}

export async function deleteSubscriber(db: Knex, id: number): Promise<void> {
  await db('subscribers').where({ id }).delete();
}

/** Adds counted feed fetches in one statement. */
export async function addSyncs(db: Knex, increments: Array<[number, number]>): Promise<void> {
  const values = increments.map(() => '(?::bigint, ?::bigint)').join(', ');
  await db.raw(
    `UPDATE subscribers s SET sync_count = s.sync_count + v.n, last_synced_at = now() FROM (VALUES ${values}) AS v(id, n) WHERE s.id = v.id`,
    increments.flat(),
  );
}
