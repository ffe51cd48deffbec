import { addCounts, type CountRow } from '../../shared/analytics/counts';
import { sanitizeDescription } from '../../shared/calendar/html';
import { toSubmissionJson } from '../../shared/smart-links/submission-json';
import { recordWebhookEvents, teamsListening } from '../../shared/webhooks/outbox';
import { eventsWithCalendars } from '../../shared/events/event-rows';
import { toEventJson } from '../../shared/events/event-json';
import type { Knex } from '../../shared/db/knex';
import type { SmartLinkSubmission, SubmissionOutcome } from '../../shared/queues/smart-link.job';
import { reserveEventSlots } from '../../shared/usage/event-limit';
import {
  deleteEvents,
  eventIdsByUid,
  insertEvents,
  insertSubmissions,
  liveCalendars,
  type NewEventRow,
  recordedOutcomes,
  type SubmissionInsert,
} from './submissions.repository';

interface BatchResult {
  outcomes: Map<string, SubmissionOutcome>;
  /** Calendars that gained events (their feeds must be rebuilt). */
  calendarsChanged: Set<number>;
}

/** Between two turns of the event loop, at most about this much sanitizing. */
const SLICE_MS = 20;

/**
 * The batch's descriptions as stored (sanitized HTML; null for none), made before the
 * transaction and a slice of time at a time. A long description takes the sanitizer a
 * while; a batch of hundreds read in one go held the event loop (health checks, the jobs'
 * lock renewals) and the transaction's locks for seconds.
 */
async function sanitizedDescriptions(batch: SmartLinkSubmission[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  let sliceStart = performance.now();
  for (const j of batch) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise<void>((resolve) => {
        setImmediate(resolve);
      });
      sliceStart = performance.now();
    }
    out.set(j.submission, j.event.description ? sanitizeDescription(j.event.description) || null : null);
  }
  return out;
}

/**
 * Turns a batch of submissions into events in one transaction, idempotently:
 * - a submission already recorded (its job run again) keeps its recorded outcome, nothing written;
 * - identical content (same event uid) makes one event; the others are `duplicate` of it;
 * - new events take slots of their team's monthly allowance, in the order received; those
 *   beyond it are removed again and their submissions `failed` with event_limit_exceeded;
 * - every submission gets its row, in the same transaction as its event;
 * - every submission recorded is counted in analytics (day received, calendar, event, outcome),
 *   in that transaction too, so a job run again counts nothing twice;
 * - the teams' webhooks hear of each new event (`event.created`, the event as the API shows
 *   it, links at `baseUrl`) and of each submission's outcome, in the same transaction.
 */
/** The analytics counts of recorded submissions: per day received (UTC), calendar, event and outcome. */
function submissionCounts(
  recorded: Array<{ uid: string; team_id: number; status: string }>,
  under: Map<string, { calendarId: number; eventId: number }>,
  receivedAt: Map<string, string>,
): CountRow[] {
  const counts = new Map<string, CountRow>();
  for (const row of recorded) {
    const where = under.get(row.uid) as { calendarId: number; eventId: number };
    const day = (receivedAt.get(row.uid) as string).slice(0, 10);
    const key = `${day} ${where.calendarId} ${where.eventId} ${row.status}`;
    const count = counts.get(key);
    if (count) count.count++;
    else {
      counts.set(key, {
        day,
        team_id: row.team_id,
        calendar_id: where.calendarId,
        event_id: where.eventId,
        metric: 'submission',
        platform: row.status,
        bot: false,
        referrer_host: '',
        utm_source: '',
        utm_medium: '',
        utm_campaign: '',
        count: 1,
      });
    }
  }
  return [...counts.values()];
}

export async function writeBatch(db: Knex, batch: SmartLinkSubmission[], now: Date, baseUrl: string): Promise<BatchResult> {
  const descriptions = await sanitizedDescriptions(batch);
  return db.transaction(async (trx) => {
    const outcomes = await recordedOutcomes(trx, batch.map((j) => j.submission));
    const fresh = batch.filter((j) => !outcomes.has(j.submission)).sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
    const calendarsChanged = new Set<number>();
    if (!fresh.length) return { outcomes, calendarsChanged };

    const live = await liveCalendars(trx, [...new Set(fresh.map((j) => j.link.calendarId))]);
    const writable = fresh.filter((j) => live.has(j.link.calendarId));
    const byEventUid = new Map<string, SmartLinkSubmission>();
    for (const j of writable) if (!byEventUid.has(j.event.uid)) byEventUid.set(j.event.uid, j);
    const rows: NewEventRow[] = [...byEventUid.values()].map((j) => ({
      ...j.event,
      description: descriptions.get(j.submission) ?? null,
      team_id: j.link.teamId,
      calendar_id: j.link.calendarId,
    }));
    const inserted = await insertEvents(trx, rows);

    // The allowance, team by team (in id order, so concurrent batches lock alike).
    const refused = new Set<string>();
    const newByTeam = new Map<number, string[]>();
    for (const j of byEventUid.values()) {
      if (inserted.has(j.event.uid)) newByTeam.set(j.link.teamId, [...(newByTeam.get(j.link.teamId) ?? []), j.event.uid]);
    }
    for (const teamId of [...newByTeam.keys()].sort((a, b) => a - b)) {
      const uids = newByTeam.get(teamId) as string[];
      const { granted } = await reserveEventSlots(trx, teamId, uids.length, now);
      for (const uid of uids.slice(granted)) refused.add(uid);
    }
    await deleteEvents(trx, [...refused].map((uid) => inserted.get(uid) as number));

    const existing = await eventIdsByUid(trx, [...byEventUid.keys()].filter((uid) => !inserted.has(uid)));
    const submissions: SubmissionInsert[] = [];
    /** Where each submission is counted in analytics: its calendar, and its event when it has one. */
    const countedUnder = new Map<string, { calendarId: number; eventId: number }>();
    const firstOf = new Set<string>();
    for (const j of fresh) {
      let outcome: SubmissionOutcome;
      let eventId: number | null = null;
      if (!live.has(j.link.calendarId)) {
        outcome = { status: 'failed', event: null, error: 'calendar_not_found' };
      } else if (refused.has(j.event.uid)) {
        outcome = { status: 'failed', event: null, error: 'event_limit_exceeded' };
      } else if (inserted.has(j.event.uid) && !firstOf.has(j.event.uid)) {
        firstOf.add(j.event.uid);
        eventId = inserted.get(j.event.uid) as number;
        outcome = { status: 'processed', event: j.event.uid, error: null };
        calendarsChanged.add(j.link.calendarId);
      } else {
        eventId = inserted.get(j.event.uid) ?? existing.get(j.event.uid) ?? null;
        outcome = { status: 'duplicate', event: j.event.uid, error: null };
      }
      outcomes.set(j.submission, outcome);
      countedUnder.set(j.submission, { calendarId: j.link.calendarId, eventId: eventId ?? 0 });
      submissions.push({
        uid: j.submission,
        smart_link_id: j.link.id,
        team_id: j.link.teamId,
        status: outcome.status,
        event_id: eventId,
        error: outcome.error,
        received_at: j.receivedAt,
      });
    }
    const recorded = await insertSubmissions(trx, submissions);
    // Counted with the records, so a submission is counted once, exactly when it is recorded.
    await addCounts(trx, submissionCounts(recorded, countedUnder, new Map(fresh.map((j) => [j.submission, j.receivedAt]))));
    // The teams' webhooks hear of each new event, then of each outcome, in the same
    // transaction (see shared/webhooks/outbox.ts): an event's created message comes before
    // anything later done to it. Events are read back only for teams that listen.
    const created = [...inserted].filter(([uid]) => !refused.has(uid));
    const listening = await teamsListening(trx, [...new Set(created.map(([uid]) => (byEventUid.get(uid) as SmartLinkSubmission).link.teamId))], 'event.created');
    const told = await eventsWithCalendars(
      trx,
      created.filter(([uid]) => listening.has((byEventUid.get(uid) as SmartLinkSubmission).link.teamId)).map(([, id]) => id),
    );
    await recordWebhookEvents(
      trx,
      told.map((found) => ({ teamId: found.event.team_id, type: 'event.created', resource: `event:${found.event.uid}`, data: toEventJson(found, baseUrl), at: now })),
    );
    await recordWebhookEvents(
      trx,
      recorded.map((row) => ({
        teamId: row.team_id,
        type: row.status === 'failed' ? 'smart_link.submission_failed' : 'smart_link.submission_processed',
        resource: `submission:${row.uid}`,
        data: toSubmissionJson({ ...row, event_uid: outcomes.get(row.uid)?.event ?? null }),
        at: new Date(),
      })),
    );
    return { outcomes, calendarsChanged };
  });
}

