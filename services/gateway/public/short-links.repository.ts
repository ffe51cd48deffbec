import type { Knex } from '../../../shared/db/knex';

/**
 * Short links of events and calendars share one namespace (`/l/{slug}` finds either), kept
 * in one table so uniqueness holds under concurrency. Slugs compare case-insensitively.
 */
export type ShortLinkOwner = { eventId: number } | { calendarId: number };

const ownerColumns = (owner: ShortLinkOwner) =>
  'eventId' in owner ? { event_id: owner.eventId, calendar_id: null } : { event_id: null, calendar_id: owner.calendarId };

/** Claims the slug for the owner; false when someone else holds it. */
export async function claimShortLink(trx: Knex, slug: string, owner: ShortLinkOwner): Promise<boolean> {
  const rows = await trx('short_links')
    .insert({ slug: slug.toLowerCase(), ...ownerColumns(owner) })
    .onConflict('slug')
    .ignore()
    .returning('slug');
  return rows.length === 1;
}

export async function releaseShortLink(trx: Knex, owner: ShortLinkOwner): Promise<void> {
  const where = 'eventId' in owner ? { event_id: owner.eventId } : { calendar_id: owner.calendarId };
  await trx('short_links').where(where).delete();
}

/** Moves the owner's short link to `next` (null removes it); false when `next` is taken. */
export async function replaceShortLink(
  trx: Knex,
  owner: ShortLinkOwner,
  current: string | null,
  next: string | null,
): Promise<boolean> {
  if ((current ?? '').toLowerCase() === (next ?? '').toLowerCase()) return true;
  await releaseShortLink(trx, owner);
  return next === null ? true : claimShortLink(trx, next, owner);
}

/** The uid of the event or calendar holding the slug (deleted or not: callers decide what is public). */
export async function findShortLink(db: Knex, slug: string): Promise<{ eventUid: string | null; calendarUid: string | null } | null> {
  const row = await db('short_links as s')
    .leftJoin('events as e', 'e.id', 's.event_id')
    .leftJoin('calendars as c', 'c.id', 's.calendar_id')
    .where('s.slug', slug.toLowerCase())
    .first('e.uid as event_uid', 'c.uid as calendar_uid');
  return row ? { eventUid: row.event_uid ?? null, calendarUid: row.calendar_uid ?? null } : null;
}
