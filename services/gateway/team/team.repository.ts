import type { Role } from '../../../shared/accounts/roles';
import type { Knex } from '../../../shared/db/knex';

/** A user as the members page shows them. */
export interface MemberRow {
  id: number;
  uid: string;
  name: string;
  email: string;
  role: Role;
  invited_by: number | null;
  last_sign_in_at: string | null;
  created_at: string;
  has_password: boolean;
}

const members = (db: Knex) =>
  db('users').select('id', 'uid', 'name', 'email', 'role', 'invited_by', 'last_sign_in_at', 'created_at', db.raw('password_hash IS NOT NULL AS has_password'));

export const listMembers = (db: Knex, teamId: number): Promise<MemberRow[]> => members(db).where({ team_id: teamId }).orderBy('id');

export const findMember = (db: Knex, teamId: number, uid: string): Promise<MemberRow | undefined> => members(db).where({ team_id: teamId, uid }).first();

export const findUserById = (db: Knex, id: number): Promise<(MemberRow & { team_id: number }) | undefined> => members(db).select('team_id').where({ id }).first();


/**
 * How many owners the team has besides `userId`, counted with the owners' rows locked: two
 * admins demoting the last two owners at once cannot both pass the check.
 */
export async function otherOwners(trx: Knex, teamId: number, userId: number): Promise<number> {
  const rows = await trx('users').where({ team_id: teamId, role: 'owner' }).whereNot({ id: userId }).forUpdate().select('id');
  return rows.length;
}

/** A team's live tokens (API and extension), newest first, with whose they are. */
export interface TokenRow {
  uid: string;
  kind: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  user_uid: string;
  user_name: string;
}

export const listLiveTokens = (db: Knex, teamId: number) =>
  db('api_tokens as k')
    .join('users as u', 'u.id', 'k.user_id')
    .where('k.team_id', teamId)
    .whereNull('k.revoked_at')
    .orderBy('k.id', 'desc')
    .select<TokenRow[]>(
      'k.uid',
      'k.kind',
      'k.name',
      'k.created_at',
      'k.last_used_at',
      'u.uid as user_uid',
      'u.name as user_name',
    );
