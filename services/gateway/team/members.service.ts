import { findUserByEmail } from '../../../shared/accounts/accounts.repository';
import { atLeast, type Role } from '../../../shared/accounts/roles';
import { createSignInLink } from '../../../shared/accounts/sign-in-links';
import { conflict, forbidden, notFound } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { accountMailJob, newAccountMailJobId } from '../../../shared/queues/account-mail.job';
import type { AppContext } from '../context';
import type { AuthContext } from '../http/auth';
import { findMember, listMembers, type MemberRow, otherOwners } from './team.repository';

type Deps = Pick<AppContext, 'db' | 'config' | 'clock' | 'queues' | 'caches'>;
/** Who acts: their team, their id, their role. */
type Actor = Pick<AuthContext, 'teamId' | 'userId' | 'role'>;

const TAKEN = 'This address already has an account.';
const LAST_OWNER = 'The team needs an owner: make someone else owner first.';

/** Only an owner makes, changes or removes an owner. */
function checkOwnerRule(actor: Actor, ...roles: Role[]): void {
  if (roles.includes('owner') && !atLeast(actor.role, 'owner')) throw forbidden('Only an owner can make, change or remove an owner.');
}

export const teamMembers = (deps: Deps, teamId: number): Promise<MemberRow[]> => listMembers(deps.db, teamId);

async function requireMember(deps: Deps, teamId: number, publicId: string): Promise<MemberRow> {
  const uid = uidFromPublicId('usr_', publicId);
  const found = uid ? await findMember(deps.db, teamId, uid) : undefined;
  if (!found) throw notFound('Member');
  return found;
}

/**
 * Adds someone to the team with a role, and queues them an email with a sign-in link, in
 * one transaction. An address with an account (in any team) is a 409, also when two
 * invitations race; invitations are off under SIGNUP=closed.
 */
export async function inviteMember(deps: Deps, actor: Actor, input: { email: string; name?: string; role: Role }, requestId: string): Promise<MemberRow> {
  if (deps.config.signup === 'closed') throw forbidden('Invitations are turned off here (SIGNUP=closed): the operator adds people.');
  checkOwnerRule(actor, input.role);
  if (await findUserByEmail(deps.db, input.email)) throw conflict(TAKEN);
  const uid = newUid();
  try {
    await deps.db.transaction(async (trx) => {
      const [user] = await trx('users')
        .insert({ uid, team_id: actor.teamId, name: input.name ?? input.email.split('@')[0], email: input.email, role: input.role, invited_by: actor.userId })
        .returning(['id']);
      const linkUid = await createSignInLink(trx, deps.config.appKey, { purpose: 'invite', email: input.email, userId: user.id }, deps.clock.now());
      await deps.queues.producer(accountMailJob).add('invitation', { linkUid, meta: { requestId } }, { jobId: newAccountMailJobId() });
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict(TAKEN);
    throw err;
  }
  return requireMember(deps, actor.teamId, `usr_${uid}`);
}

/** A member's new role; the team keeps at least one owner. Their sessions see it at once, on every gateway. */
export async function changeRole(deps: Deps, actor: Actor, publicId: string, role: Role): Promise<MemberRow> {
  const member = await requireMember(deps, actor.teamId, publicId);
  checkOwnerRule(actor, member.role, role);
  await deps.db.transaction(async (trx) => {
    if (member.role === 'owner' && role !== 'owner' && (await otherOwners(trx, actor.teamId, member.id)) === 0) throw conflict(LAST_OWNER);
    await trx('users').where({ id: member.id }).update({ role, updated_at: trx.fn.now() });
  });
  await deps.caches.invalidate({ kind: 'user', id: member.id });
  return { ...member, role };
}

/** Removes a member (never the last owner): their sessions and tokens stop at once; what they made stays. */
export async function removeMember(deps: Deps, actor: Actor, publicId: string): Promise<void> {
  const member = await requireMember(deps, actor.teamId, publicId);
  checkOwnerRule(actor, member.role);
  await deps.db.transaction(async (trx) => {
    if (member.role === 'owner' && (await otherOwners(trx, actor.teamId, member.id)) === 0) throw conflict(LAST_OWNER);
    await trx('users').where({ id: member.id }).delete();
  });
  await deps.caches.invalidate({ kind: 'user', id: member.id });
}
