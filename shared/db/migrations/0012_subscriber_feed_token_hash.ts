import type { Knex } from 'knex';

/**
 * Personal feeds are found by the SHA-256 of their token, not by the token itself, so the
 * secret never meets a comparison whose time depends on how much of it matched (an index
 * walk). The token stays stored: the API shows each subscriber's feed address.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE subscribers ADD COLUMN feed_token_hash text');
  await knex.raw("UPDATE subscribers SET feed_token_hash = encode(sha256(convert_to(feed_token, 'UTF8')), 'hex')");
  await knex.raw('ALTER TABLE subscribers ALTER COLUMN feed_token_hash SET NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX subscribers_feed_token_hash ON subscribers (feed_token_hash)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE subscribers DROP COLUMN feed_token_hash');
}
