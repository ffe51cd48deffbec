import type { Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import type { Logger } from '../../shared/logging/logger';
import { startSweep } from '../../shared/db/retention';

/** Rows per statement: short transactions, no long hold on any table. */
const BATCH = 5000;
/** One worker at a time purges ("team"). */
const PURGE_LOCK = 0x7465616d;

/**
 * A deleted team's rows, deleted a batch per statement before the team itself (whose
 * delete then removes what is left through the foreign keys' ON DELETE CASCADE: people,
 * calendars, links, webhooks and their messages, tokens, usage). `?` is the team's id.
 * Each finds its batch through an index: submissions by link, events live and deleted
 * (their RSVPs, invitees, deliveries, reminders and short links go with them), the rest by
 * team.
 */
const BATCHES = [
  `DELETE FROM smart_link_submissions WHERE id IN (
     SELECT s.id FROM smart_link_submissions s WHERE s.smart_link_id IN (SELECT id FROM smart_links WHERE team_id = :team) LIMIT ${BATCH})`,
  `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE team_id = :team AND deleted_at IS NULL LIMIT ${BATCH})`,
  `DELETE FROM events WHERE id IN (
     SELECT id FROM events WHERE calendar_id IN (SELECT id FROM calendars WHERE team_id = :team) AND deleted_at IS NOT NULL LIMIT ${BATCH})`,
  `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE team_id = :team LIMIT ${BATCH})`,
  `DELETE FROM analytics_daily WHERE ctid = ANY(ARRAY(SELECT ctid FROM analytics_daily WHERE team_id = :team LIMIT ${BATCH}))`,
  `DELETE FROM extractions WHERE id IN (SELECT id FROM extractions WHERE team_id = :team LIMIT ${BATCH})`,
];

/** One statement under the purge lock, in a transaction of its own: rows deleted, or null when another worker holds the lock. */
async function locked(db: Knex, sql: string, teamId: number): Promise<number | null> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw('SELECT pg_try_advisory_xact_lock(?) AS locked', [PURGE_LOCK]);
    if (!rows[0].locked) return null;
    const result = await trx.raw(sql, { team: teamId });
    return result.rowCount as number;
  });
}

/** Deletes one deleted team, rows and all; null when another worker is purging. */
async function purgeTeam(db: Knex, teamId: number): Promise<number | null> {
  let total = 0;
  for (const sql of BATCHES) {
    for (;;) {
      const deleted = await locked(db, sql, teamId);
      if (deleted === null) return null;
      total += deleted;
      if (deleted < BATCH) break;
    }
  }
  const team = await locked(db, 'DELETE FROM teams WHERE id = :team AND deleted_at IS NOT NULL', teamId);
  return team === null ? null : total + team;
}

/**
 * Deletes every team its owner deleted before `before`, with all its rows; answers how many
 * teams and rows went. A worker killed halfway leaves the team marked and partly deleted:
 * the next run goes on where it stopped.
 */
export async function purgeDeletedTeams(db: Knex, before: Date): Promise<{ teams: number; rows: number }> {
  const due: Array<{ id: number }> = await db('teams').select('id').where('deleted_at', '<=', before).orderBy('deleted_at').limit(100);
  let teams = 0;
  let rows = 0;
  for (const { id } of due) {
    const deleted = await purgeTeam(db, Number(id));
    if (deleted === null) break;
    teams += 1;
    rows += deleted;
  }
  return { teams, rows };
}

/** The purge at work in a worker: soon after it starts, then every few minutes. */
export function startTeamPurge(
  ctx: { db: Knex; clock: Clock; logger: Logger },
  delayMinutes: number,
  timing: { firstAfterMs: number; everyMs: number } = { firstAfterMs: 30_000, everyMs: 5 * 60_000 },
) {
  const run = async () => {
    const done = await purgeDeletedTeams(ctx.db, new Date(ctx.clock.now().getTime() - delayMinutes * 60_000));
    if (done.teams) ctx.logger.info(done, 'deleted teams purged');
  };
  return startSweep(ctx, { what: 'purge deleted teams', run }, timing);
}
