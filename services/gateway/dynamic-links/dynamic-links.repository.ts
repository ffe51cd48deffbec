import type { Knex } from '../../../shared/db/knex';

export interface DynamicLinkRow {
  id: number;
  uid: string;
  team_id: number;
  name: string | null;
  uses: number;
  last_used_at: string | null;
  created_at: string;
}

const COLUMNS = ['id', 'uid', 'team_id', 'name', 'uses', 'last_used_at', 'created_at'] as const;
const live = (db: Knex) => db('dynamic_links').whereNull('deleted_at');

export async function insertDynamicLink(db: Knex, values: { uid: string; team_id: number; name: string | null }): Promise<DynamicLinkRow> {
  const [row] = await db('dynamic_links').insert(values).returning(COLUMNS);
  return row;
}

export const listDynamicLinks = (db: Knex, teamId: number): Promise<DynamicLinkRow[]> =>
  live(db).select(COLUMNS).where({ team_id: teamId }).orderBy('id');

/** By uid: of the team, or of any team when teamId is null (the public /api/dyn pages). */
export function findDynamicLink(db: Knex, uid: string, teamId: number | null): Promise<DynamicLinkRow | undefined> {
  const q = live(db).first(COLUMNS).where({ uid });
  if (teamId !== null) q.where({ team_id: teamId });
  return q;
}

export async function deleteDynamicLink(db: Knex, id: number): Promise<void> {
  await db('dynamic_links').where({ id }).update({ deleted_at: db.fn.now() });
}

/** Adds counted uses in one statement. */
export async function addUses(db: Knex, increments: Array<[number, number]>): Promise<void> {
  const values = increments.map(() => '(?::bigint, ?::bigint)').join(', ');
  await db.raw(
    `UPDATE dynamic_links d SET uses = d.uses + v.n, last_used_at = now() FROM (VALUES ${values}) AS v(id, n) WHERE d.id = v.id`,
    increments.flat(),
  );
}
