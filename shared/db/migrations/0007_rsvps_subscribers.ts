import type { Knex } from 'knex';

/**
 * RSVPs (one answer per email per event; the event keeps the counts, updated in the same
 * transaction, which is also how the `yes` cap holds under concurrency) and calendar
 * subscribers (each with a personal feed address whose fetches are counted).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.integer('rsvp_yes').notNullable().defaultTo(0);
    t.integer('rsvp_maybe').notNullable().defaultTo(0);
    t.integer('rsvp_no').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('rsvps', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('email').notNullable();
    t.text('answer').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw("ALTER TABLE rsvps ADD CONSTRAINT rsvps_answer_check CHECK (answer IN ('yes', 'maybe', 'no'))");
  await knex.raw('CREATE UNIQUE INDEX rsvps_event_email ON rsvps (event_id, lower(email))');
  await knex.raw('CREATE INDEX rsvps_event_listing ON rsvps (event_id, id)');

  await knex.schema.alterTable('calendars', (t) => {
    t.boolean('ask_subscriber_details').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('subscribers', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique(); // sub_ public id
    t.text('feed_token').notNullable().unique(); // in the personal feed address
    t.bigInteger('calendar_id').notNullable().references('calendars.id').onDelete('CASCADE');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('platform').notNullable();
    t.text('name').nullable();
    t.text('email').nullable();
    t.text('status').notNullable().defaultTo('active');
    t.bigInteger('sync_count').notNullable().defaultTo(0);
    t.timestamp('last_synced_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw("ALTER TABLE subscribers ADD CONSTRAINT subscribers_status_check CHECK (status IN ('active', 'blocked'))");
  await knex.raw('CREATE INDEX subscribers_calendar_listing ON subscribers (calendar_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('subscribers');
  await knex.schema.alterTable('calendars', (t) => t.dropColumn('ask_subscriber_details'));
  await knex.schema.dropTableIfExists('rsvps');
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('rsvp_yes');
    t.dropColumn('rsvp_maybe');
    t.dropColumn('rsvp_no');
  });
}
