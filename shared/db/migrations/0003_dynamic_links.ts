import type { Knex } from 'knex';

/** Dynamic-link keys: add-to-calendar pages for events that are not stored, counted per use. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dynamic_links', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').nullable();
    t.bigInteger('uses').notNullable().defaultTo(0);
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.raw('CREATE INDEX dynamic_links_team ON dynamic_links (team_id, id) WHERE deleted_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dynamic_links');
}
