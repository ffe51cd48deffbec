import type { Knex } from '../../../shared/db/knex';

/**
 * Short links of events and calendars share one namespace (`/l/{slug}` finds either), kept
 * in one table so uniqueness holds under concurrency. Slugs compare case-insensitively.
 *
 * A slug its owner gives up (a new short link, none, or the owner deleted) is retired, not
 * freed: `/l/{slug}` still leads to the owner while the owner is public, and only the same
 * team can claim it again (which moves it to the claimer). Another team never inherits the
 * traffic of links already printed or shared. The team is the owner's: events and calendars
 * are only soft-deleted, so a retired slug always has one.
 */
type ShortLinkHolder = { eventId: number } | { calendarId: number };
type ShortLinkOwner = ShortLinkHolder & { teamId: number };

const ownerColumns = (owner: ShortLinkOwner) =>
  'eventId' in owner ? { event_id: owner.eventId, calendar_id: null } : { event_id: null, calendar_id: owner.calendarId };

const liveLinkOf = (owner: ShortLinkHolder) =>
  'eventId' in owner ? { event_id: owner.eventId, retired_at: null } : { calendar_id: owner.calendarId, retired_at: null };

/** True for a retired short link whose (soft-deleted or not) owner belongs to the team. */
const RETIRED_BY_TEAM = `short_links.retired_at IS NOT NULL AND ? = COALESCE(
  (SELECT team_id FROM events WHERE id = short_links.event_id),
  (SELECT team_id FROM calendars WHERE id = short_links.calendar_id))`;

/**
 * Claims the slug for the owner: a free one, or one its team retired. False when it is in
 * use, or retired by another team.
 */
export async function claimShortLink(trx: Knex, slug: string, owner: ShortLinkOwner): Promise<boolean> {
  const columns = ownerColumns(owner);
  const { rows } = await trx.raw(
    `INSERT INTO short_links (slug, event_id, calendar_id) VALUES (?, ?, ?)
     ON CONFLICT (slug) DO UPDATE
        SET event_id = EXCLUDED.event_id, calendar_id = EXCLUDED.calendar_id, retired_at = NULL
      WHERE ${RETIRED_BY_TEAM}
     RETURNING slug`,
    [slug.toLowerCase(), columns.event_id, columns.calendar_id, owner.teamId],
  );
  return rows.length === 1;
}

/**
 * Deletes a slug the team retired so a new event can take it in its insert; false when the
 * slug is not one of the team's retired ones. Call it in the transaction that inserts.
 */
export async function reclaimRetiredShortLink(trx: Knex, slug: string, teamId: number): Promise<boolean> {
  const { rowCount } = await trx.raw(`DELETE FROM short_links WHERE slug = ? AND ${RETIRED_BY_TEAM}`, [slug.toLowerCase(), teamId]);
  return rowCount === 1;
}

/** Retires the owner's live short link, if it has one. */
export async function retireShortLink(trx: Knex, owner: ShortLinkHolder): Promise<void> {
  await trx('short_links').where(liveLinkOf(owner)).update({ retired_at: trx.fn.now() });
}

/** Moves the owner's short link to `next` (null removes it); false when `next` is taken. */
export async function replaceShortLink(
  trx: Knex,
  owner: ShortLinkOwner,
  current: string | null,
  next: string | null,
): Promise<boolean> {
  if ((current ?? '').toLowerCase() === (next ?? '').toLowerCase()) return true;
  await retireShortLink(trx, owner);
  return next === null ? true : claimShortLink(trx, next, owner);
}

/**
 * The uid of the event or calendar the slug leads to, live or retired, deleted or not:
 * callers decide what is public.
 */
export async function findShortLink(db: Knex, slug: string): Promise<{ eventUid: string | null; calendarUid: string | null } | null> {
  const row = await db('short_links as s')
    .leftJoin('events as e', 'e.id', 's.event_id')
    .leftJoin('calendars as c', 'c.id', 's.calendar_id')
    .where('s.slug', slug.toLowerCase())
    .first('e.uid as event_uid', 'c.uid as calendar_uid');
  return row ? { eventUid: row.event_uid ?? null, calendarUid: row.calendar_uid ?? null } : null;
}
