import type { Knex } from '../db/knex';

/** What analytics count: page views, adds, feed fetches, RSVPs, smart-link submissions. */
export type Metric = 'view' | 'add' | 'feed_fetch' | 'rsvp' | 'submission';

/** One count to add: its day (UTC, YYYY-MM-DD), whose it is, the metric and its dimensions ('' for none). */
export interface CountRow {
  day: string;
  team_id: number;
  calendar_id: number;
  /** 0 for the calendar itself. */
  event_id: number;
  metric: Metric;
  /** The platform of an add or feed fetch, the answer of an RSVP, the outcome of a submission. */
  platform: string;
  bot: boolean;
  referrer_host: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  count: number;
}

/**
 * Adds counts to their rows of analytics_daily in one statement: the gateways' batches of
 * visits, and the smart-link worker's outcomes in the transaction that records them.
 */
export async function addCounts(db: Knex, rows: CountRow[]): Promise<void> {
  if (!rows.length) return;
  await db.raw(
    `INSERT INTO analytics_daily (day, team_id, calendar_id, event_id, metric, platform, bot, referrer_host, utm_source, utm_medium, utm_campaign, count)
     SELECT day, team_id, calendar_id, event_id, metric, platform, bot, referrer_host, utm_source, utm_medium, utm_campaign, count
       FROM json_to_recordset(?::json) AS r(day date, team_id bigint, calendar_id bigint, event_id bigint, metric text, platform text, bot boolean,
                                            referrer_host text, utm_source text, utm_medium text, utm_campaign text, count bigint)
      -- A team purged since it was counted: its counts go with it, not the batch.
      WHERE EXISTS (SELECT 1 FROM teams t WHERE t.id = r.team_id)
     ON CONFLICT (team_id, day, calendar_id, event_id, metric, platform, bot, referrer_host, utm_source, utm_medium, utm_campaign)
     DO UPDATE SET count = analytics_daily.count + excluded.count`,
    [JSON.stringify(rows)],
  );
}
