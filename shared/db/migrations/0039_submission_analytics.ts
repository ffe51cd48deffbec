import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * Smart-link submissions counted in analytics, by outcome (`processed`, `duplicate`,
 * `failed`, kept in the `platform` dimension as RSVP answers are): the metric list gains
 * `submission`. The new check is added NOT VALID and then validated, which reads the table
 * under a lock that lets the gateways go on writing their counts, without the migration
 * connection's statement timeout (a large table takes longer). Each step commits alone.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  // One statement: the table is never without its check.
  await knex.raw(
    "ALTER TABLE analytics_daily DROP CONSTRAINT analytics_daily_metric_check, ADD CONSTRAINT analytics_daily_metric_check CHECK (metric IN ('view', 'add', 'feed_fetch', 'rsvp', 'submission')) NOT VALID",
  );
  await unbounded(knex, ['ALTER TABLE analytics_daily VALIDATE CONSTRAINT analytics_daily_metric_check']);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM analytics_daily WHERE metric = 'submission'");
  await knex.raw("ALTER TABLE analytics_daily DROP CONSTRAINT analytics_daily_metric_check, ADD CONSTRAINT analytics_daily_metric_check CHECK (metric IN ('view', 'add', 'feed_fetch', 'rsvp'))");
}
