import { EXTRACTION_COLUMNS, type ExtractionRow } from '../../../shared/extractions/extraction-json';
import type { Knex } from '../../../shared/db/knex';

const COLUMNS = EXTRACTION_COLUMNS;

interface NewExtraction {
  uid: string;
  team_id: number;
  user_id: number;
  text: string;
  timezone: string;
  reference_date: string;
}

export async function insertExtraction(db: Knex, values: NewExtraction): Promise<ExtractionRow> {
  const [row] = await db('extractions').insert(values).returning(COLUMNS);
  return row;
}

/** Undoes an insert whose job could not be queued, so no pending row waits forever. */
export async function deleteExtraction(db: Knex, id: number): Promise<void> {
  await db('extractions').where({ id }).delete();
}

/** The team's extraction; another team's uid finds nothing, exactly like an unknown one. */
export async function findTeamExtraction(db: Knex, teamId: number, uid: string): Promise<ExtractionRow | undefined> {
  return db('extractions').first(COLUMNS).where({ uid, team_id: teamId });
}
