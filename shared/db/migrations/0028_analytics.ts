import type { Knex } from 'knex';

/**
 * Add-to-calendar analytics: counts per UTC day, team, calendar and event (0: the calendar
 * itself), metric and its dimensions, written by the gateways in batches. No address,
 * cookie or fingerprint is kept: a row is a count. Dimensions that are absent are '' so the
 * primary key (which every read starts with: team, then days) can name them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE analytics_daily (
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    day date NOT NULL,
    calendar_id bigint NOT NULL,
    event_id bigint NOT NULL DEFAULT 0,
    metric text NOT NULL CHECK (metric IN ('view', 'add', 'feed_fetch', 'rsvp')),
    platform text NOT NULL DEFAULT '',
    bot boolean NOT NULL DEFAULT false,
    referrer_host text NOT NULL DEFAULT '',
    utm_source text NOT NULL DEFAULT '',
    utm_medium text NOT NULL DEFAULT '',
    utm_campaign text NOT NULL DEFAULT '',
    count bigint NOT NULL,
    PRIMARY KEY (team_id, day, calendar_id, event_id, metric, platform, bot, referrer_host, utm_source, utm_medium, utm_campaign)
  )`);
  // An event's figures of all time (GET …/events/{evt}?with_stats=true).
  await knex.raw('CREATE INDEX analytics_daily_event ON analytics_daily (event_id) WHERE event_id <> 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE analytics_daily');
}
