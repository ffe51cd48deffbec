import type { Knex } from 'knex';
import { newUid } from '../../ids/ids';

/**
 * Work in Redis must never be taken for another database's:
 * - `deployment` holds one random id made with the database. Jobs carry it, and a worker
 *   leaves a job of another id to that database's own workers (two deployments on one Redis
 *   and QUEUE_PREFIX), instead of reading its row ids against the wrong tables.
 * - `deliveries.key` is a random key per message. A mail job names each message by row id
 *   and key, and a worker claims only a row with both: a job left in Redis by a database
 *   that was restored from a backup or recreated (whose row ids start again) matches
 *   nothing, instead of marking someone else's message as sent. Rows made before this
 *   migration keep no key (their jobs name none).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('deployment', (t) => {
    t.text('id').primary();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX deployment_single ON deployment ((true))');
  await knex('deployment').insert({ id: newUid() });
  // Nullable first, then the default: existing rows are not rewritten.
  await knex.raw('ALTER TABLE deliveries ADD COLUMN key uuid');
  await knex.raw('ALTER TABLE deliveries ALTER COLUMN key SET DEFAULT gen_random_uuid()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries DROP COLUMN key');
  await knex.schema.dropTable('deployment');
}
