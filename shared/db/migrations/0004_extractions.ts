import type { Knex } from 'knex';

/**
 * Extractions: free text a team asked to be read into event fields. The gateway inserts the
 * row (pending) before it queues the job; the extraction worker finishes it exactly once
 * (completed with a result, or failed with an error). Looked up by uid only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('extractions', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.bigInteger('user_id').nullable().references('users.id').onDelete('SET NULL');
    t.text('status').notNullable().defaultTo('pending');
    t.text('text').notNullable();
    t.text('timezone').notNullable();
    // The moment the text was written ("tomorrow" counts from it); the gateway sets it.
    t.timestamp('reference_date', { useTz: true }).notNullable();
    t.jsonb('result').nullable();
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true }).nullable();
  });
  await knex.raw(`
    ALTER TABLE extractions
      ADD CONSTRAINT extractions_status_check CHECK (status IN ('pending', 'completed', 'failed')),
      ADD CONSTRAINT extractions_finished_check CHECK ((status = 'pending') = (completed_at IS NULL)),
      ADD CONSTRAINT extractions_result_check CHECK (status <> 'completed' OR result IS NOT NULL),
      ADD CONSTRAINT extractions_error_check CHECK (status <> 'failed' OR error IS NOT NULL)
  `);
  await knex.raw('CREATE INDEX extractions_team ON extractions (team_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('extractions');
}
