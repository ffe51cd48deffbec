import { insertToken, revokeTokens } from '../../../shared/accounts/accounts.repository';
import type { Invalidation } from '../../../shared/cache/invalidation';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import { mailQuotaOf, mailUsage } from '../../../shared/mail/mail-quota';
import { usageSnapshot } from '../../../shared/usage/event-limit';
import type { AppContext } from '../context';
import { closeTeam, findAccount } from './account.repository';

type Deps = Pick<AppContext, 'db' | 'clock' | 'caches' | 'counters' | 'config'>;

/** The user, their team and plan, this month's events against the limit, and the team's email against its quotas. */
export async function accountOf(deps: Deps, who: { userId: number; teamId: number }) {
  const account = await findAccount(deps.db, who.userId);
  if (!account) throw notFound('Account');
  const now = deps.clock.now();
  // Events this gateway counted but has not written yet are part of the answer.
  await deps.counters.eventsCreated.flush();
  const usage = await usageSnapshot(deps.db, who.teamId, now);
  const [quota, mail] = await Promise.all([mailQuotaOf(deps.db, who.teamId), mailUsage(deps.db, who.teamId, now)]);
  return { account, now, usage, quota, mail };
}

export type Account = Awaited<ReturnType<typeof accountOf>>;

/**
 * Deletes the team at once, when `confirm` is its name exactly: nothing of it answers once
 * this returns, on any gateway (their caches are told); its data is purged after
 * TEAM_PURGE_DELAY_MINUTES. Deleting a team already closed by another request is as asked.
 */
export async function deleteTeam(deps: Deps, teamId: number, confirm: string): Promise<{ teamUid: string; purgeAfter: Date }> {
  const team: { uid: string; name: string } | undefined = await deps.db('teams').first('uid', 'name').where({ id: teamId });
  if (!team) throw notFound('Team');
  if (confirm !== team.name) throw validationFailed({ confirm: ['Type the team’s name exactly, as it is, to delete it.'] });
  const closed = await deps.db.transaction((trx) => closeTeam(trx, teamId));
  if (closed) {
    const gone: Invalidation[] = [
      ...closed.userIds.map((id): Invalidation => ({ kind: 'user', id })),
      ...closed.calendarIds.map((id): Invalidation => ({ kind: 'calendar', id })),
      ...closed.dynamicLinkUids.map((uid): Invalidation => ({ kind: 'dynamic-link', uid })),
    ];
    await deps.caches.invalidate(...gone);
  }
  return { teamUid: team.uid, purgeAfter: new Date(deps.clock.now().getTime() + deps.config.teamPurgeDelayMinutes * 60_000) };
}

/** A new browser-extension token for the user (shown once). */
export const createExtensionToken = (deps: Deps, who: { userId: number; teamId: number }) =>
  insertToken(deps.db, { userId: who.userId, teamId: who.teamId, kind: 'extension', name: 'browser extension' });

/** Revokes every extension token of the user (API tokens stay), on every gateway at once; how many there were. */
export async function revokeExtensionTokens(deps: Deps, userId: number): Promise<number> {
  const revoked = await revokeTokens(deps.db, userId, 'extension');
  await deps.caches.invalidate({ kind: 'user', id: userId });
  return revoked;
}
