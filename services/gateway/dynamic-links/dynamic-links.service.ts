import { createHash } from 'node:crypto';
import { parseDateInput, pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { lastDayAfterMinutes, plusMinutesIso, resolveEventTimes } from '../calendar/event-times';
import type { EventView } from '../../../shared/calendar/event-view';
import { sanitizeDescription } from '../../../shared/calendar/html';
import { normalizeUntil } from '../../../shared/calendar/recurrence';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import type { AppContext } from '../context';
import {
  deleteDynamicLink as deleteRow,
  type DynamicLinkRow,
  findDynamicLink,
  insertDynamicLink,
  listDynamicLinks as listRows,
} from './dynamic-links.repository';
import type { DynamicEventInput } from './dynamic-links.schemas';

type Deps = Pick<AppContext, 'db' | 'caches' | 'config'>;

export function toDynamicLinkJson(row: DynamicLinkRow, baseUrl: string) {
  const example = `${baseUrl}/api/dyn?uid=dk_${row.uid}&title=Launch&start=2030-01-15%2010:00&duration=60&timezone=UTC`;
  return {
    id: `dk_${row.uid}`,
    name: row.name,
    uses: row.uses,
    last_used_at: row.last_used_at ? pgTimestampToIsoMicros(row.last_used_at) : null,
    page_url_example: example,
    created_at: pgTimestampToIsoMicros(row.created_at),
  };
}

export const createDynamicLink = (deps: Deps, teamId: number, name: string | null) =>
  insertDynamicLink(deps.db, { uid: newUid(), team_id: teamId, name: name || null });

export const listDynamicLinks = (deps: Deps, teamId: number) => listRows(deps.db, teamId);

export async function requireDynamicLink(deps: Deps, teamId: number, publicId: string): Promise<DynamicLinkRow> {
  const uid = uidFromPublicId('dk_', publicId);
  const row = uid ? await findDynamicLink(deps.db, uid, teamId) : undefined;
  if (!row) throw notFound('Dynamic link');
  return row;
}

export async function deleteDynamicLink(deps: Deps, teamId: number, publicId: string): Promise<DynamicLinkRow> {
  const row = await requireDynamicLink(deps, teamId, publicId);
  await deleteRow(deps.db, row.id);
  await deps.caches.invalidate({ kind: 'dynamic-link', uid: row.uid });
  return row;
}

/** The key of a /api/dyn request (cached while the invalidation feed is live), or null. */
export async function resolveKey(deps: Deps, publicKey: string): Promise<DynamicLinkRow | null> {
  const uid = uidFromPublicId('dk_', publicKey);
  if (!uid) return null;
  const cached = deps.caches.dynamicLinks.get(uid);
  if (cached) return cached;
  const startedAt = deps.caches.dynamicLinks.begin();
  const row = await findDynamicLink(deps.db, uid, null);
  if (row) deps.caches.dynamicLinks.set(uid, row, startedAt);
  return row ?? null;
}

/**
 * The event a dynamic link describes, or a 422 naming each bad value. Defaults: one hour
 * (all-day: the same day; a duration in whole days); `duration` wins over `end`; a bare-date
 * start is all-day; the rule's UNTIL is normalized as for stored events.
 */
export function dynamicEventView(input: DynamicEventInput, pageUrl: string, nowMs: number): EventView {
  const start = parseDateInput(input.start);
  if (!start) throw validationFailed({ start: ['The start field must be a valid date.'] });
  const isAllDay = input.allDay ?? start.kind === 'date';
  let end = input.end;
  if (isAllDay) {
    // As for smart links: a duration counts in whole days (at least one) and wins over end.
    end = input.duration !== undefined ? lastDayAfterMinutes(start, input.timezone, input.duration) : (end ?? input.start);
  } else if (input.duration !== undefined || end === undefined) {
    end = plusMinutesIso(start, input.timezone, input.duration ?? 60);
  }
  const timing = resolveEventTimes({ isAllDay, start: input.start, end, timezone: input.timezone, startField: 'start', endField: 'end' });
  if ('errors' in timing) throw validationFailed(timing.errors);
  const identity = JSON.stringify([input.key, input.title, timing.times, input.timezone, input.location ?? '', input.recurring ?? '']);
  return {
    uid: createHash('sha256').update(identity).digest('hex').slice(0, 16),
    title: input.title,
    descriptionHtml: input.description ? sanitizeDescription(input.description) || null : null,
    location: input.location || null,
    locationUrl: null,
    imageUrl: null,
    startMs: Date.parse(timing.times.date_start),
    endMs: Date.parse(timing.times.date_end),
    isAllDay,
    timezone: input.timezone,
    // UNTIL in the form RFC 5545 wants beside this start, as stored events have it.
    recurrenceRule: input.recurring ? normalizeUntil(input.recurring, { isAllDay, timezone: input.timezone }) : null,
    reminderBefore: input.alarm ?? null,
    busyType: null,
    sequence: 0,
    updatedMs: nowMs,
    pageUrl,
  };
}
