import type { Knex } from 'knex';

/**
 * take_event_slots: reserve_event_slots that fails the statement when the allowance cannot
 * take them all, with the figures for the 409 in the error detail. It lets a create be
 * one statement (insert + reservation), so the usage row is locked only for that statement
 * and its commit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION take_event_slots(p_team_id bigint, p_period text, p_wanted int) RETURNS int
    LANGUAGE plpgsql AS $$
    DECLARE r record;
    BEGIN
      SELECT * INTO r FROM reserve_event_slots(p_team_id, p_period, p_wanted);
      IF r.granted < p_wanted THEN
        RAISE EXCEPTION 'event_limit_exceeded' USING ERRCODE = 'P0001',
          DETAIL = json_build_object('current', r.current_count - r.granted, 'limit', r.event_limit)::text;
      END IF;
      RETURN r.current_count;
    END $$
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS take_event_slots(bigint, text, int)');
}
