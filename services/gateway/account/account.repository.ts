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
