import type { Knex } from '../db/knex';
import { AppError } from '../errors/app-error';

/** The monthly allowance period of an instant: `YYYY-MM` in UTC. */
export const periodOf = (at: Date): string => at.toISOString().slice(0, 7);

interface Reservation {
  granted: number;
  /** Events counted this period after the reservation. */
  current: number;
  limit: number | null;
}

/**
 * Takes up to `wanted` slots of the team's monthly event allowance. Call it inside the
 * transaction that inserts the events: the slots come back if that transaction rolls back.
 */
export async function reserveEventSlots(trx: Knex, teamId: number, wanted: number, at: Date): Promise<Reservation> {
  const { rows } = await trx.raw('SELECT * FROM reserve_event_slots(?, ?, ?)', [teamId, periodOf(at), wanted]);
  const row = rows[0];
  return { granted: row.granted, current: row.current_count, limit: row.event_limit };
}

/** A team's events counted in a period without a reservation (see take_event_slots). */
export const usageKey = (teamId: number, period: string) => `${teamId}/${period}`;

/** Adds counted events to the teams' usage rows, one statement for the whole batch. */
export async function addUsage(db: Knex, increments: Array<[key: string, by: number]>): Promise<void> {
  const teams: number[] = [];
  const periods: string[] = [];
  const counts: number[] = [];
  for (const [key, by] of increments) {
    const [teamId, period] = key.split('/');
    teams.push(Number(teamId));
    periods.push(period);
    counts.push(by);
  }
  await db.raw(
    `INSERT INTO team_usage (team_id, period, events_created)
     SELECT u.* FROM unnest(?::bigint[], ?::text[], ?::int[]) AS u(team_id, period, n)
      -- A team purged since it was counted: its count goes with it, not the batch.
      WHERE EXISTS (SELECT 1 FROM teams t WHERE t.id = u.team_id)
     ON CONFLICT (team_id, period) DO UPDATE SET events_created = team_usage.events_created + EXCLUDED.events_created`,
    [teams, periods, counts],
  );
}

interface UsageSnapshot {
  current: number;
  limit: number | null;
  remaining: number | null;
  is_unlimited: boolean;
}

export async function usageSnapshot(db: Knex, teamId: number, at: Date): Promise<UsageSnapshot> {
  const row = await db('teams as t')
    .join('plans as p', 'p.id', 't.plan_id')
    .leftJoin('team_usage as u', function joinUsage() {
      this.on('u.team_id', 't.id').andOn('u.period', db.raw('?', [periodOf(at)]));
    })
    .where('t.id', teamId)
    .first(db.raw('COALESCE(t.event_limit_override, p.monthly_event_limit) AS event_limit'), db.raw('COALESCE(u.events_created, 0) AS current'));
  const limit: number | null = row?.event_limit ?? null;
  const current: number = row?.current ?? 0;
  return {
    current,
    limit,
    remaining: limit === null ? null : Math.max(0, limit - current),
    is_unlimited: limit === null,
  };
}

/**
 * The 409 for a take_event_slots failure (SQLSTATE P0001, message event_limit_exceeded,
 * figures in the detail), or null when the error is something else.
 */
export function eventLimitErrorFrom(err: unknown, wanted = 1): AppError | null {
  const e = err as { code?: string; message?: string; detail?: string };
  if (e?.code !== 'P0001' || !e.message?.includes('event_limit_exceeded') || !e.detail) return null;
  const { current, limit } = JSON.parse(e.detail) as { current: number; limit: number };
  return eventLimitExceeded(current, limit, wanted);
}

/** The 409 (docs/api.md, "Event limit") for a creation of `wanted` events that the allowance cannot take. */
function eventLimitExceeded(current: number, limit: number, wanted = 1): AppError {
  return new AppError('event_limit_exceeded', 409, 'You have reached the event limit of your plan for this month.', {
    current,
    limit,
    remaining: Math.max(0, limit - current),
    would_exceed_by: current + wanted - limit,
    is_unlimited: false,
    limit_type: 'monthly',
  });
}
