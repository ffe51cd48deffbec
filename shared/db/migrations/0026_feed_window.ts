import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * A calendar's ICS feed holds a bounded window: the events still going on or to come, and
 * those that ended in the last `feed_past_days` days, at most `feed_max_events` of them
 * (null: the service's defaults). Reading that window must cost what it holds, however
 * long the calendar's past, so it is read through the end of each event's series:
 *
 * `event_series_end(rule, date_start, ends_at)` is when the last occurrence ends: `ends_at`
 * for a single event, UNTIL (as a UTC date, two days of slack for zones and a date UNTIL)
 * plus the event's length for a rule that has one, and infinity for a COUNT or an endless
 * rule (a COUNT is left to the clients that expand it; such a series stays in the feed).
 * It never raises: a rule it cannot read counts as endless.
 *
 * Two indexes over it: a btree by calendar and series end (the events that ended in the
 * past window, newest first, stopping at the limit) and a GiST of each series' span (the
 * series going on now). Built CONCURRENTLY, as 0024 is.
 */
export const config = { transaction: false };

const FUNCTION = `CREATE OR REPLACE FUNCTION event_series_end(rule text, starts timestamptz, ends timestamptz)
RETURNS timestamptz LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  until text;
BEGIN
  IF rule IS NULL THEN
    RETURN ends;
  END IF;
  until := substring(rule FROM 'UNTIL=([0-9]{8})');
  IF until IS NULL THEN
    RETURN 'infinity';
  END IF;
  RETURN greatest(ends, (make_date(substr(until, 1, 4)::int, substr(until, 5, 2)::int, substr(until, 7, 2)::int) + 2)::timestamp AT TIME ZONE 'UTC' + (ends - starts));
EXCEPTION WHEN others THEN
  RETURN 'infinity';
END
$$`;

const SERIES_END = 'event_series_end(recurrence_rule, date_start, ends_at)';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calendars ADD COLUMN IF NOT EXISTS feed_past_days integer, ADD COLUMN IF NOT EXISTS feed_max_events integer');
  await knex.raw(FUNCTION);
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS events_calendar_series_end',
    `CREATE INDEX CONCURRENTLY events_calendar_series_end ON events (calendar_id, ${SERIES_END}) WHERE deleted_at IS NULL`,
    'DROP INDEX CONCURRENTLY IF EXISTS events_calendar_series',
    `CREATE INDEX CONCURRENTLY events_calendar_series ON events USING gist (calendar_id, tstzrange(date_start, ${SERIES_END}, '[)')) WHERE deleted_at IS NULL`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await unbounded(knex, ['DROP INDEX CONCURRENTLY IF EXISTS events_calendar_series', 'DROP INDEX CONCURRENTLY IF EXISTS events_calendar_series_end']);
  await knex.raw('DROP FUNCTION IF EXISTS event_series_end(text, timestamptz, timestamptz)');
  await knex.raw('ALTER TABLE calendars DROP COLUMN IF EXISTS feed_past_days, DROP COLUMN IF EXISTS feed_max_events');
}
