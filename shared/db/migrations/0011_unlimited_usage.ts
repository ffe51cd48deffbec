import type { Knex } from 'knex';

/**
 * take_event_slots reserves nothing for a team without a limit: there is nothing to hold,
 * and the usage row's lock made one team's concurrent creates wait for each other's
 * commits. It answers NULL then, and the gateway counts those events in batches (a few
 * seconds later, in one statement). Teams with a limit reserve as before, under the lock
 * that makes the limit exact.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION take_event_slots(p_team_id bigint, p_period text, p_wanted int) RETURNS int
    LANGUAGE plpgsql AS $$
    DECLARE r record; lim int;
    BEGIN
      SELECT COALESCE(t.event_limit_override, p.monthly_event_limit) INTO lim
        FROM teams t JOIN plans p ON p.id = t.plan_id WHERE t.id = p_team_id;
      IF lim IS NULL THEN
        RETURN NULL;
      END IF;
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
  await knex.raw(`
    CREATE OR REPLACE FUNCTION take_event_slots(p_team_id bigint, p_period text, p_wanted int) RETURNS int
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
