import type { Knex } from 'knex';

/**
 * Smart links (tokenless event creation from forms and webhooks) and the record of every
 * submission they accepted. A submission row is written by the worker in the same
 * transaction as its event, so a re-run job finds it and does nothing twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('smart_links', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique(); // sl_ public id
    t.text('key').notNullable().unique(); // in /s/{key}
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.bigInteger('calendar_id').notNullable().references('calendars.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.boolean('requires_approval').notNullable().defaultTo(false);
    t.boolean('signed').notNullable().defaultTo(false);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.integer('default_duration').notNullable().defaultTo(60);
    // Webhook signing secrets, encrypted with a key derived from APP_KEY.
    t.text('secret_enc').notNullable();
    t.text('previous_secret_enc').nullable();
    t.timestamp('previous_secret_expires_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.raw('CREATE INDEX smart_links_team ON smart_links (team_id, id) WHERE deleted_at IS NULL');

  await knex.schema.createTable('smart_link_submissions', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique(); // sls_ public id = the BullMQ job id
    t.bigInteger('smart_link_id').notNullable().references('smart_links.id').onDelete('CASCADE');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('status').notNullable(); // processed | duplicate | failed
    t.bigInteger('event_id').nullable().references('events.id').onDelete('SET NULL');
    t.text('error').nullable();
    t.timestamp('received_at', { useTz: true }).notNullable();
    t.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw("ALTER TABLE smart_link_submissions ADD CONSTRAINT sls_status_check CHECK (status IN ('processed', 'duplicate', 'failed'))");
  await knex.raw('CREATE INDEX smart_link_submissions_link ON smart_link_submissions (smart_link_id, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('smart_link_submissions');
  await knex.schema.dropTableIfExists('smart_links');
}
