import type { SubmissionRow } from '../../shared/smart-links/submission-json';
import type { Knex } from '../../shared/db/knex';
import type { SmartLinkSubmission, SubmissionOutcome } from '../../shared/queues/smart-link.job';

/** Submissions already recorded (a re-run job): their outcome, by submission uid. */
export async function recordedOutcomes(trx: Knex, uids: string[]): Promise<Map<string, SubmissionOutcome>> {
  const rows = await trx('smart_link_submissions as x')
    .leftJoin('events as e', 'e.id', 'x.event_id')
    .whereIn('x.uid', uids)
    .select('x.uid', 'x.status', 'x.error', 'e.uid as event_uid');
  return new Map(rows.map((r) => [r.uid as string, { status: r.status, event: r.event_uid ?? null, error: r.error ?? null }]));
}

/** The live calendars among these, locked so none is deleted while events go in. */
export async function liveCalendars(trx: Knex, ids: number[]): Promise<Set<number>> {
  const rows = await trx('calendars').whereIn('id', ids).whereNull('deleted_at').forKeyShare().select('id');
  return new Set(rows.map((r) => r.id as number));
}

/** A submission's event as the job carries it, placed in its link's team and calendar. */
export type NewEventRow = SmartLinkSubmission['event'] & { team_id: number; calendar_id: number };

/** One multi-row insert; rows whose uid exists already are skipped. Answers uid → id of the new ones. */
export async function insertEvents(trx: Knex, rows: NewEventRow[]): Promise<Map<string, number>> {
  if (!rows.length) return new Map();
  // uid order everywhere, so concurrent batches take index locks in one order (no deadlock).
  const sorted = [...rows].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  const inserted = await trx('events').insert(sorted).onConflict('uid').ignore().returning(['id', 'uid']);
  return new Map(inserted.map((r) => [r.uid as string, r.id as number]));
}

export async function eventIdsByUid(trx: Knex, uids: string[]): Promise<Map<string, number>> {
  if (!uids.length) return new Map();
  const rows = await trx('events').whereIn('uid', uids).select('id', 'uid');
  return new Map(rows.map((r) => [r.uid as string, r.id as number]));
}

export async function deleteEvents(trx: Knex, ids: number[]): Promise<void> {
  if (ids.length) await trx('events').whereIn('id', ids).delete();
}

export interface SubmissionInsert {
  uid: string;
  smart_link_id: number;
  team_id: number;
  status: SubmissionOutcome['status'];
  event_id: number | null;
  error: string | null;
  received_at: string;
}

/** Records the outcomes; answers the rows written (one recorded already, by a job run before, is left as it was). */
export async function insertSubmissions(trx: Knex, rows: SubmissionInsert[]): Promise<Array<Omit<SubmissionRow, 'event_uid'>>> {
  if (!rows.length) return [];
  return trx('smart_link_submissions')
    .insert(rows)
    .onConflict('uid')
    .ignore()
    .returning(['uid', 'smart_link_id', 'team_id', 'status', 'error', 'received_at', 'processed_at']);
}
