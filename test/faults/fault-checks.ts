import type { Knex } from '../../shared/db/knex';
import type { SmtpSink } from '../helpers/smtp';

/**
 * What became of the work a fault test asked for, counted the same way in every scenario:
 * lost = accepted but not done, duplicated = done more than once.
 */

export interface Audit {
  lost: number;
  duplicated: number;
}

/**
 * A team's submissions, each sent with its own title: an accepted one must be one
 * `processed` row whose event has that title; a second event with a title, or a
 * `duplicate` row (never sent on purpose here), is a double. `unacceptedStored` counts
 * rows of submissions that got no 202 (allowed, once).
 */
export async function auditSubmissions(db: Knex, teamId: number, accepted: Map<string, string>): Promise<Audit & { unacceptedStored: number }> {
  const rows: Array<{ uid: string; status: string; title: string | null }> = await db('smart_link_submissions as s')
    .leftJoin('events as e', 'e.id', 's.event_id')
    .where('s.team_id', teamId)
    .select('s.uid', 's.status', 'e.title');
  const titles: string[] = await db('events').where({ team_id: teamId }).pluck('title');
  const byId = new Map(rows.map((r) => [`sls_${r.uid}`, r]));
  const lost = [...accepted].filter(([id, title]) => byId.get(id)?.status !== 'processed' || byId.get(id)?.title !== title).length;
  const perTitle = new Map<string, number>();
  for (const t of titles) perTitle.set(t, (perTitle.get(t) ?? 0) + 1);
  const duplicated = [...perTitle.values()].reduce((n, c) => n + c - 1, 0) + rows.filter((r) => r.status === 'duplicate').length;
  const unacceptedStored = rows.filter((r) => !accepted.has(`sls_${r.uid}`)).length;
  return { lost, duplicated, unacceptedStored };
}

/**
 * Emails: every delivery row of these recipients `sent` and its message received by the
 * sink (lost otherwise); a message received more than once is a double.
 */
export async function auditEmails(db: Knex, sink: SmtpSink, recipients: string[]): Promise<Audit> {
  const rows: Array<{ email: string; status: string }> = await db('deliveries').whereIn('email', recipients).select('email', 'status');
  const lost = recipients.filter((r) => sink.for(r).length === 0 || rows.find((row) => row.email === r)?.status !== 'sent').length;
  const duplicated = recipients.reduce((n, r) => n + Math.max(0, sink.for(r).length - 1), 0);
  return { lost, duplicated };
}
