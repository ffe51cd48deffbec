import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { notFound } from '../../../shared/errors/app-error';
import type { AppContext } from '../context';

type Deps = Pick<AppContext, 'db'>;

/** The most a listing answers (newest first): a team's hard bounces stay few. */
export const LISTED_SUPPRESSIONS = 500;

/** The addresses the team no longer emails, newest first, as the API shows them. */
export async function listSuppressions(deps: Deps, teamId: number) {
  const rows: Array<{ email: string; reason: string; created_at: string }> = await deps.db('mail_suppressions')
    .select('email', 'reason', 'created_at')
    .where({ team_id: teamId })
    .orderBy('created_at', 'desc')
    .limit(LISTED_SUPPRESSIONS);
  return rows.map((r) => ({ ...r, created_at: pgTimestampToIsoMicros(r.created_at) }));
}

/** Emails the address again (its next message is sent); a 404 when it was not suppressed. Answers the address as stored. */
export async function liftSuppression(deps: Deps, teamId: number, address: string): Promise<string> {
  const email = address.toLowerCase();
  const removed = await deps.db('mail_suppressions').where({ team_id: teamId, email }).delete();
  if (!removed) throw notFound('Suppressed address');
  return email;
}
