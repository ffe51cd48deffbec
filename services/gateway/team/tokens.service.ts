import { insertTokenRow, revokeToken as revokeRow } from '../../../shared/accounts/accounts.repository';
import { notFound } from '../../../shared/errors/app-error';
import { uidFromPublicId } from '../../../shared/ids/ids';
import type { AppContext } from '../context';
import { listLiveTokens, type TokenRow } from './team.repository';

type Deps = Pick<AppContext, 'db' | 'caches'>;

/** The team's tokens not revoked, newest first, each with its user. */
export const liveTokens = (deps: Deps, teamId: number): Promise<TokenRow[]> => listLiveTokens(deps.db, teamId);

/** A new API token acting as the user: its row, and the secret (shown once). */
export async function createApiToken(deps: Deps, who: { userId: number; teamId: number }, name: string): Promise<{ row: TokenRow; token: string }> {
  const { token, uid } = await insertTokenRow(deps.db, { userId: who.userId, teamId: who.teamId, kind: 'api', name });
  const [row] = await listLiveTokens(deps.db, who.teamId).where('k.uid', uid);
  return { row, token };
}

/** Revokes one of the team's tokens; it stops working at once on every gateway. */
export async function revokeToken(deps: Deps, teamId: number, publicId: string): Promise<void> {
  const uid = uidFromPublicId('tok_', publicId);
  const revoked = uid ? await revokeRow(deps.db, { uid }, teamId) : undefined;
  if (!revoked) throw notFound('Token');
  await deps.caches.invalidate({ kind: 'user', id: revoked.userId });
}
