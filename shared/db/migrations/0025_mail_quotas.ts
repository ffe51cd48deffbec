import type { Knex } from 'knex';

/**
 * Outgoing email quotas, per plan: messages a team may have the service send in a UTC day
 * and a calendar month (null: no limit), and how many a day one address may be sent by one
 * team, whatever the API calls. Messages over a recipient's daily limit are recorded as
 * skipped, not sent. Deliveries of a team are counted by creation time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE plans ADD COLUMN mail_per_day integer, ADD COLUMN mail_per_month integer, ADD COLUMN mail_per_recipient_per_day integer');
  await knex.raw(`UPDATE plans SET mail_per_day = v.day, mail_per_month = v.month, mail_per_recipient_per_day = v.recipient
    FROM (VALUES ('free', 300, 3000, 5), ('pro', 5000, 50000, 10), ('business', 50000, 500000, 20)) AS v(id, day, month, recipient)
    WHERE plans.id = v.id`);
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check');
  await knex.raw("ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN ('queued', 'sent', 'failed', 'skipped'))");
  await knex.raw('CREATE INDEX deliveries_team_created ON deliveries (team_id, created_at)');
  await knex.raw('CREATE INDEX deliveries_team_recipient ON deliveries (team_id, lower(email), created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_team_recipient');
  await knex.raw('DROP INDEX deliveries_team_created');
  await knex.raw("DELETE FROM deliveries WHERE status = 'skipped'");
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check');
  await knex.raw("ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN ('queued', 'sent', 'failed'))");
  await knex.raw('ALTER TABLE plans DROP COLUMN mail_per_day, DROP COLUMN mail_per_month, DROP COLUMN mail_per_recipient_per_day');
}
