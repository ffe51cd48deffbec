import type { SubmissionRow } from '../../../shared/smart-links/submission-json';
import type { Knex } from '../../../shared/db/knex';

export interface SmartLinkRow {
  id: number;
  uid: string;
  key: string;
  team_id: number;
  calendar_id: number;
  name: string;
  requires_approval: boolean;
  signed: boolean;
  is_active: boolean;
  default_duration: number;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A link as the ingest path needs it, with its calendar's uid and zone. */
export interface IngestLink extends SmartLinkRow {
  calendar_uid: string;
  calendar_timezone: string;
}

const COLUMNS = [
  'id', 'uid', 'key', 'team_id', 'calendar_id', 'name', 'requires_approval', 'signed', 'is_active', 'default_duration',
  'secret_enc', 'previous_secret_enc', 'previous_secret_expires_at', 'created_at', 'updated_at',
] as const;

const live = (db: Knex) => db('smart_links as s').whereNull('s.deleted_at');
const withCalendar = (db: Knex) =>
  live(db)
    .join('calendars as c', 'c.id', 's.calendar_id')
    .whereNull('c.deleted_at')
    .select([...COLUMNS.map((c) => `s.${c}`), 'c.uid as calendar_uid', 'c.timezone as calendar_timezone']);

export async function insertSmartLink(db: Knex, values: Partial<SmartLinkRow>): Promise<SmartLinkRow> {
  const [row] = await db('smart_links').insert(values).returning(COLUMNS);
  return row;
}

export async function updateSmartLink(db: Knex, id: number, values: Partial<SmartLinkRow>): Promise<SmartLinkRow> {
  const [row] = await db('smart_links')
    .where({ id })
    .update({ ...values, updated_at: db.fn.now() })
    .returning(COLUMNS);
  return row;
}

export const listSmartLinks = (db: Knex, teamId: number): Promise<IngestLink[]> => withCalendar(db).where('s.team_id', teamId).orderBy('s.id');

export function findSmartLink(db: Knex, teamId: number, uid: string, lock = false): Promise<IngestLink | undefined> {
  const q = withCalendar(db).where({ 's.team_id': teamId, 's.uid': uid }).first();
  if (lock) q.forUpdate('s');
  return q;
}

/** A link as the ingest path needs it: with its calendar and its plan's submissions per minute (null: no limit). */
export interface KeyedLink extends IngestLink {
  rate_per_minute: number | null;
}

/** The live link behind a /s/{key} (any team), with its calendar and its plan's rate. */
export const findSmartLinkByKey = (db: Knex, key: string): Promise<KeyedLink | undefined> =>
  withCalendar(db)
    .join('teams as t', 't.id', 's.team_id')
    .join('plans as p', 'p.id', 't.plan_id')
    .select('p.smart_link_per_minute as rate_per_minute')
    .where('s.key', key)
    .first();

export async function softDeleteSmartLink(db: Knex, id: number): Promise<void> {
  await db('smart_links').where({ id }).update({ deleted_at: db.fn.now(), is_active: false });
}

const submissionSelect = (db: Knex) =>
  db('smart_link_submissions as x')
    .leftJoin('events as e', 'e.id', 'x.event_id')
    .select('x.uid', 'x.smart_link_id', 'x.team_id', 'x.status', 'e.uid as event_uid', 'x.error', 'x.received_at', 'x.processed_at');

/** Where a page of submissions ends: the last one's receipt time (as Postgres wrote it) and id. */
export type SubmissionKey = [receivedAt: string, id: number];

/**
 * A link's submissions, the last received first (the worker records them in batches, not
 * always in the order they came in, so the row id alone is not the order of receipt).
 */
export function listSubmissions(
  db: Knex,
  linkId: number,
  opts: { status?: string; before?: SubmissionKey; limit: number },
): Promise<Array<SubmissionRow & { id: number; received_key: string }>> {
  const q = submissionSelect(db)
    .select('x.id', db.raw('x.received_at::text AS received_key'))
    .where('x.smart_link_id', linkId)
    .orderBy([
      { column: 'x.received_at', order: 'desc' },
      { column: 'x.id', order: 'desc' },
    ])
    .limit(opts.limit);
  if (opts.status) q.where('x.status', opts.status);
  if (opts.before) q.whereRaw('(x.received_at, x.id) < (?::timestamptz, ?::bigint)', opts.before);
  return q;
}

/** Which of these submissions of a link have their record written. */
export async function recordedSubmissionUids(db: Knex, linkId: number, uids: string[]): Promise<Set<string>> {
  if (!uids.length) return new Set();
  const rows = await db('smart_link_submissions').where('smart_link_id', linkId).whereRaw('uid = ANY(?)', [uids]).select('uid');
  return new Set(rows.map((r) => r.uid as string));
}

export const findSubmission = (db: Knex, teamId: number, uid: string): Promise<SubmissionRow | undefined> =>
  submissionSelect(db).where({ 'x.uid': uid, 'x.team_id': teamId }).first();
