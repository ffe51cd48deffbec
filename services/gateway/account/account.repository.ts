import type { Knex } from '../../../shared/db/knex';

interface AccountRow {
  user_uid: string;
  user_name: string;
  user_email: string;
  team_uid: string;
  team_name: string;
  plan_id: string;
  plan_name: string;
  plan_limit: number | null;
  event_limit_override: number | null;
}

export async function findAccount(db: Knex, userId: number): Promise<AccountRow | undefined> {
  return db('users as u')
    .join('teams as t', 't.id', 'u.team_id')
    .join('plans as p', 'p.id', 't.plan_id')
    .where('u.id', userId)
    .first(
      'u.uid as user_uid',
      'u.name as user_name',
      'u.email as user_email',
      't.uid as team_uid',
      't.name as team_name',
      'p.id as plan_id',
      'p.name as plan_name',
      'p.monthly_event_limit as plan_limit',
      't.event_limit_override',
    );
}

/** What a deleted team leaves in the read caches, to be dropped on every gateway. */
interface ClosedTeam {
  userIds: number[];
  calendarIds: number[];
  dynamicLinkUids: string[];
}

/**
 * Closes the team in the caller's transaction, so that nothing of it answers once it
 * commits: its people are deleted (with their sessions, tokens and sign-in links, which
 * frees their addresses), its calendars, smart links, webhooks and dynamic links are
 * deleted (pages, feeds, forms and deliveries stop), and its emails still queued are
 * skipped. Its events and records stay until the purge (services/smart-link-worker/team-purge.ts) deletes
 * them in batches. Null when the team is already closed.
 */
export async function closeTeam(trx: Knex, teamId: number): Promise<ClosedTeam | null> {
  const closed = await trx('teams').where({ id: teamId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() }, ['id']);
  if (!closed.length) return null;
  const users = await trx('users').where({ team_id: teamId }).delete(['id']);
  const calendars = await trx('calendars').where({ team_id: teamId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now(), short_link: null }, ['id']);
  await trx('smart_links').where({ team_id: teamId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now(), is_active: false });
  await trx('webhooks').where({ team_id: teamId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now(), is_active: false });
  const dynamicLinks = await trx('dynamic_links').where({ team_id: teamId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now() }, ['uid']);
  await trx('deliveries').where({ team_id: teamId, status: 'queued' }).update({ status: 'skipped', error: 'team deleted', updated_at: trx.fn.now() });
  return {
    userIds: users.map((u: { id: number }) => u.id),
    calendarIds: calendars.map((c: { id: number }) => c.id),
    dynamicLinkUids: dynamicLinks.map((d: { uid: string }) => d.uid),
  };
}
