import type { Knex } from '../../shared/db/knex';

/** The term a search for a common word looks for: in one title of 154 (0.65%). */
export const SCALE_SEARCH_TERM = 'summit';
const SEARCH_EVERY = 154;
/** The events' starts span this many days, centred on `now`. */
export const SCALE_SPAN_DAYS = 3 * 365;

/**
 * `count` events in one calendar, by INSERT … SELECT (100,000 in seconds): starts spread
 * evenly over three years centred on `now` (so half are past), an hour each; one in 154
 * titles holds "summit"; one in 7 has an internal name; one in 40 is a draft and one in 97
 * pending, so that a page of published events has some to pass over. The rows go in as
 * `parts` statements at once, each on its own connection of `db` (its pool should allow as
 * many), each a contiguous share of the series: most of the time goes into keeping the
 * indexes up row by row (the trigram and range GiST indexes above all), which one backend
 * does on one core. The statistics are rebuilt afterwards (VACUUM ANALYZE), as autovacuum
 * would do on a calendar that grew.
 */
export async function seedScaleEvents(db: Knex, p: { teamId: number; calendarId: number; count: number; now: Date; parts?: number }): Promise<void> {
  const parts = Math.max(1, Math.min(p.parts ?? 1, p.count));
  const share = Math.ceil(p.count / parts);
  const ranges = Array.from({ length: parts }, (_, k) => [k * share + 1, Math.min(p.count, (k + 1) * share)]).filter(([from, to]) => from <= to);
  await Promise.all(ranges.map(([from, to]) => insertRange(db, p, from, to)));
  await db.raw('VACUUM ANALYZE events');
}

async function insertRange(db: Knex, p: { teamId: number; calendarId: number; count: number; now: Date }, from: number, to: number): Promise<void> {
  await db.raw(
    `INSERT INTO events (uid, team_id, calendar_id, title, internal_name, date_start, date_end, ends_at, timezone, is_draft, status, has_rsvp, description)
     SELECT substr(md5(random()::text || i::text), 1, 16), :teamId, :calendarId,
            CASE WHEN i % :searchEvery = 0 THEN 'Quarterly ' || :term || ' ' || i
                 ELSE (ARRAY['Standup', 'Review', 'Launch', 'Offsite', 'Lunch', 'Workshop', 'Webinar'])[i % 7 + 1] || ' ' || i END,
            CASE WHEN i % 7 = 0 THEN 'internal-' || i END,
            ts, ts + interval '1 hour', ts + interval '1 hour', 'Europe/Berlin',
            i % 40 = 0, CASE WHEN i % 97 = 0 THEN 'pending' ELSE 'approved' END, i % 3 = 0,
            '<p>Seeded event number ' || i || '</p>'
       FROM generate_series(:from::int, :to::int) AS i,
            LATERAL (SELECT :now::timestamptz - :span::int * interval '1 day' / 2 + (i - 1) * (:span::int * interval '1 day' / :count::int) AS ts) AS t`,
    {
      teamId: p.teamId,
      calendarId: p.calendarId,
      searchEvery: SEARCH_EVERY,
      term: SCALE_SEARCH_TERM,
      count: p.count,
      from,
      to,
      now: p.now.toISOString(),
      span: SCALE_SPAN_DAYS,
    },
  );
}
