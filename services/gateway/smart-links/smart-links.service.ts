import { toSubmissionJson } from '../../../shared/smart-links/submission-json';
import { pgTimestampToIsoMicrosOrNull } from '../../../shared/calendar/dates';
import { isRowId, Listing } from '../http/cursor';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { findCalendar } from '../calendars/calendars.repository';
import type { AppContext } from '../context';
import { queuedSubmissionsPage } from './queued-submissions';
import { queuedEntry, type QueuedKey } from '../../../shared/queues/submission-index';
import { newSigningSecret, sealSecret } from '../../../shared/webhooks/secrets';
import { newSmartLinkKey } from './secrets';
import {
  findSmartLink,
  findSubmission,
  type IngestLink,
  insertSmartLink,
  listSmartLinks,
  listSubmissions as listSubmissionRows,
  recordedSubmissionUids,
  type SmartLinkRow,
  softDeleteSmartLink,
  type SubmissionKey,
  updateSmartLink as updateRow,
} from './smart-links.repository';
import type { SmartLinkInput } from './smart-links.schemas';

type Deps = Pick<AppContext, 'db' | 'redis' | 'caches' | 'config' | 'clock' | 'queues'>;


export function toSmartLinkJson(row: IngestLink | (SmartLinkRow & { calendar_uid: string }), baseUrl: string, secret?: string) {
  return {
    id: `sl_${row.uid}`,
    key: row.key,
    url: `${baseUrl}/s/${row.key}`,
    name: row.name,
    calendar_uid: `cal_${row.calendar_uid}`,
    requires_approval: row.requires_approval,
    signed: row.signed,
    is_active: row.is_active,
    default_duration: row.default_duration,
    previous_secret_expires_at: pgTimestampToIsoMicrosOrNull(row.previous_secret_expires_at),
    created_at: pgTimestampToIsoMicrosOrNull(row.created_at) as string,
    updated_at: pgTimestampToIsoMicrosOrNull(row.updated_at) as string,
    ...(secret ? { signing_secret: secret } : {}),
  };
}

async function requireCalendarField(deps: Deps, teamId: number, calendar: string) {
  const uid = uidFromPublicId('cal_', calendar);
  const row = uid ? await findCalendar(deps.db, teamId, uid) : undefined;
  if (!row) throw validationFailed({ calendar: ['The calendar field must be the id (cal_…) of one of your calendars.'] });
  return row;
}

export async function requireSmartLink(deps: Deps, teamId: number, publicId: string, lock = false): Promise<IngestLink> {
  const uid = uidFromPublicId('sl_', publicId);
  const row = uid ? await findSmartLink(deps.db, teamId, uid, lock) : undefined;
  if (!row) throw notFound('Smart link');
  return row;
}

export async function createSmartLink(deps: Deps, teamId: number, input: SmartLinkInput) {
  const calendar = await requireCalendarField(deps, teamId, input.calendar);
  const secret = newSigningSecret();
  const row = await insertSmartLink(deps.db, {
    uid: newUid(),
    key: newSmartLinkKey(),
    team_id: teamId,
    calendar_id: calendar.id,
    name: input.name,
    requires_approval: input.requires_approval ?? false,
    signed: input.signed ?? false,
    is_active: input.is_active ?? true,
    default_duration: input.default_duration ?? 60,
    secret_enc: sealSecret(deps.config.appKey, secret),
  });
  return { link: { ...row, calendar_uid: calendar.uid }, secret };
}

export const listLinks = (deps: Deps, teamId: number) => listSmartLinks(deps.db, teamId);

export async function updateSmartLink(deps: Deps, teamId: number, publicId: string, input: SmartLinkInput) {
  const current = await requireSmartLink(deps, teamId, publicId);
  const calendar = await requireCalendarField(deps, teamId, input.calendar);
  const changes: Partial<SmartLinkRow> = { name: input.name, calendar_id: calendar.id };
  for (const key of ['requires_approval', 'signed', 'is_active', 'default_duration'] as const) {
    if (input[key] !== undefined) (changes as Record<string, unknown>)[key] = input[key];
  }
  const row = await updateRow(deps.db, current.id, changes);
  await deps.caches.invalidate({ kind: 'smart-link', key: current.key });
  return { ...row, calendar_uid: calendar.uid };
}

export async function deleteSmartLink(deps: Deps, teamId: number, publicId: string): Promise<IngestLink> {
  const current = await requireSmartLink(deps, teamId, publicId);
  await softDeleteSmartLink(deps.db, current.id);
  await deps.caches.invalidate({ kind: 'smart-link', key: current.key });
  return current;
}

/** A new secret; the one before it keeps verifying for 24 hours so senders can switch. */
export async function rotateSecret(deps: Deps, teamId: number, publicId: string) {
  const secret = newSigningSecret();
  const row = await deps.db.transaction(async (trx) => {
    const current = await requireSmartLink({ ...deps, db: trx }, teamId, publicId, true);
    const expires = new Date(deps.clock.now().getTime() + 24 * 3600 * 1000).toISOString();
    const updated = await updateRow(trx, current.id, {
      secret_enc: sealSecret(deps.config.appKey, secret),
      previous_secret_enc: current.secret_enc,
      previous_secret_expires_at: expires,
    });
    return { ...updated, calendar_uid: current.calendar_uid };
  });
  await deps.caches.invalidate({ kind: 'smart-link', key: row.key });
  return { link: row, secret };
}

/** A submission known only by its job in Redis: no record yet, so no event or processing time. */
function unrecordedSubmissionJson(uid: string, receivedAt: string | null) {
  return { id: `sls_${uid}`, status: 'queued' as const, event_public_id: null, error: null, received_at: pgTimestampToIsoMicrosOrNull(receivedAt), processed_at: null };
}

type SubmissionsQuery = { status?: string; per_page: number; cursor?: string };

export async function listSubmissions(deps: Deps, teamId: number, publicId: string, query: SubmissionsQuery) {
  const link = await requireSmartLink(deps, teamId, publicId);
  if (query.status === 'queued') return listQueuedSubmissions(deps, link.id, query);
  const before = RECORDED.after(deps.config.appKey, query.cursor);
  const rows = await listSubmissionRows(deps.db, link.id, { status: query.status, before, limit: RECORDED.fetchLimit(query.per_page) });
  const page = RECORDED.page(deps.config.appKey, rows, query.per_page, (last) => [last.received_key, last.id]);
  return { data: page.rows.map(toSubmissionJson), nextCursor: page.nextCursor };
}

/**
 * Submissions still in the queue have no row yet (the worker writes it): they are listed from
 * the index written when each was accepted, newest first (receipt time, then id), paged like
 * the records.
 */
async function listQueuedSubmissions(deps: Deps, linkId: number, query: SubmissionsQuery) {
  const after = QUEUED.after(deps.config.appKey, query.cursor);
  const { page, more } = await queuedSubmissionsPage(deps.redis, deps.config.queuePrefix, linkId, {
    after,
    limit: query.per_page,
    recorded: (uids) => recordedSubmissionUids(deps.db, linkId, uids),
  });
  const last = page[page.length - 1];
  return {
    data: page.map(([at, uid]) => unrecordedSubmissionJson(uid, new Date(at).toISOString())),
    nextCursor: more ? QUEUED.cursorAfter(deps.config.appKey, last) : null,
  };
}

/** A timestamptz as Postgres writes it (`2026-11-21 05:58:59.123+00`). */
const PG_TIMESTAMPTZ = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/;
/** A link's recorded and queued submissions page separately: one's cursor is not the other's. */
const RECORDED = new Listing<SubmissionKey>('submissions', (v): v is SubmissionKey => v.length === 2 && typeof v[0] === 'string' && PG_TIMESTAMPTZ.test(v[0]) && isRowId(v[1]));
const QUEUED = new Listing<QueuedKey>(
  'queued-submissions',
  (v): v is QueuedKey => v.length === 2 && Number.isSafeInteger(v[0]) && (v[0] as number) >= 0 && typeof v[1] === 'string' && /^[0-9A-Za-z]{16}$/.test(v[1]),
);

/**
 * A submission by id: its outcome once the worker recorded it, `queued` while its job is
 * still in Redis (and belongs to this team), else unknown.
 */
export async function getSubmission(deps: Deps, teamId: number, publicId: string) {
  const uid = uidFromPublicId('sls_', publicId);
  if (!uid) throw notFound('Submission');
  const row = await findSubmission(deps.db, teamId, uid);
  if (row) return toSubmissionJson(row);
  // No record yet: still in the queue, or given up on there. A finished job without a
  // record had its record deleted (SUBMISSION_RETENTION_DAYS): gone, like an unknown id.
  const queued = await queuedEntry(deps.redis, deps.config.queuePrefix, uid);
  if (queued && queued.teamId === teamId) {
    const json = unrecordedSubmissionJson(uid, new Date(queued.receivedAtMs).toISOString());
    return queued.failed ? { ...json, status: 'failed' as const, error: 'not_processed' } : json;
  }
  throw notFound('Submission');
}
