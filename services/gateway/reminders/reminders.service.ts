import { forbidden } from '../../../shared/errors/app-error';
import { UID_PATTERN } from '../../../shared/ids/ids';
import { type OptOut, verifyUnsubscribe } from '../../../shared/links/signatures';
import type { AppContext } from '../context';
import { findEventTrace } from '../events/events.repository';

type Deps = Pick<AppContext, 'db' | 'config'>;

/** An unsubscribe link whose signature is not the service's for what it stops, the event and the address. */
export const invalidOptOut = () => forbidden('This unsubscribe link is not valid.');

/**
 * The event an unsubscribe link names, deleted or not (a cancellation's link is followed
 * after its event is gone), once its signature is checked; undefined for a uid no event had.
 */
export async function optOutEvent(deps: Deps, what: OptOut, uid: string, link: { email: string; signature: string }) {
  const found = UID_PATTERN.test(uid) ? await findEventTrace(deps.db, uid) : undefined;
  if (!found) return undefined;
  if (!verifyUnsubscribe(deps.config.appKey, what, uid, link.email, link.signature)) throw invalidOptOut();
  return found;
}

/**
 * Records the opt-out the link stands for: that event's reminders for the address, or all of
 * the team's email to it. Idempotent; an earlier hard bounce keeps its reason (either way the
 * address gets nothing more).
 */
export async function optOut(deps: Deps, what: OptOut, event: { id: number; team_id: number }, email: string): Promise<void> {
  if (what === 'reminders') {
    await deps.db.raw('INSERT INTO reminder_optouts (event_id, email) VALUES (?, lower(?)) ON CONFLICT DO NOTHING', [event.id, email]);
  } else {
    await deps.db.raw("INSERT INTO mail_suppressions (team_id, email, reason) VALUES (?, lower(?), 'unsubscribed') ON CONFLICT DO NOTHING", [event.team_id, email]);
  }
}
