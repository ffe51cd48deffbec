import { AppError } from '../errors/app-error';
import type { Knex } from '../db/knex';
import type { NewDelivery } from './queue-mail';

/**
 * A team's outgoing email, bounded by its plan: messages per UTC day and per calendar month
 * (UTC), and messages per recipient per day. The email goes out from our address with the
 * team's subject and links: without bounds a free account could use the service to send
 * spam, and our sending reputation would pay for it.
 *
 * Applied to delivery rows just inserted in the caller's transaction, under a per-team
 * transaction lock so concurrent calls count each other. Over the day's or month's quota the
 * whole call is refused (a 429 saying which, the limit, what was used and when it resets)
 * or, for a message a visitor's action makes (an RSVP confirmation), the message is
 * skipped. A recipient already sent the plan's per-recipient number today is skipped: the
 * row stays, marked `skipped`, and nothing is sent.
 */
interface MailQuota {
  perDay: number | null;
  perMonth: number | null;
  perRecipientPerDay: number | null;
}

interface MailUsage {
  day: number;
  month: number;
}

/** The mail_quota_exceeded 429: which quota, its limit, what is used, and when it resets. */
function quotaExceeded(kind: 'daily' | 'monthly', limit: number, used: number, wanted: number, resetsAt: Date, nowMs: number): AppError {
  const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - nowMs) / 1000));
  return new AppError(
    'mail_quota_exceeded',
    429,
    `The team's ${kind} email quota (${limit} messages) would be exceeded: ${Math.max(0, limit - used)} left, ${wanted} asked for. It resets at ${resetsAt.toISOString()}.`,
    { quota: kind, limit, used, remaining: Math.max(0, limit - used), requested: wanted, resets_at: resetsAt.toISOString() },
    { 'Retry-After': String(retryAfter) },
  );
}

const dayStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
const monthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const nextDay = (now: Date) => new Date(dayStart(now).getTime() + 86_400_000);
const nextMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

/**
 * The rows to addresses that refused the team's email for good (mail_suppressions) are
 * marked skipped, with the reason; answers the others. Skipped rows count against nothing.
 */
async function withoutSuppressed(trx: Knex, teamId: number, inserted: NewDelivery[]): Promise<NewDelivery[]> {
  if (!inserted.length) return inserted;
  const { rows } = await trx.raw('SELECT email, reason FROM mail_suppressions WHERE team_id = ? AND email = ANY (?::text[])', [
    teamId,
    [...new Set(inserted.map((d) => d.email.toLowerCase()))],
  ]);
  const suppressed = new Map((rows as Array<{ email: string; reason: string }>).map((r) => [r.email, r.reason]));
  if (!suppressed.size) return inserted;
  const skipped = inserted.filter((d) => suppressed.has(d.email.toLowerCase()));
  await trx.raw(
    `UPDATE deliveries d SET status = 'skipped', error = 'address suppressed: ' || s.reason, updated_at = now()
       FROM mail_suppressions s WHERE d.id = ANY (?::bigint[]) AND s.team_id = ? AND s.email = lower(d.email)`,
    [skipped.map((d) => d.id), teamId],
  );
  return inserted.filter((d) => !suppressed.has(d.email.toLowerCase()));
}

/** The team's quota (its plan's). */
export async function mailQuotaOf(db: Knex, teamId: number): Promise<MailQuota> {
  const row = await db('teams as t')
    .join('plans as p', 'p.id', 't.plan_id')
    .where('t.id', teamId)
    .first('p.mail_per_day', 'p.mail_per_month', 'p.mail_per_recipient_per_day');
  return { perDay: row?.mail_per_day ?? null, perMonth: row?.mail_per_month ?? null, perRecipientPerDay: row?.mail_per_recipient_per_day ?? null };
}

/** Messages the team has had made today and this month (UTC), skipped ones not counted. */
export async function mailUsage(db: Knex, teamId: number, now: Date): Promise<MailUsage> {
  const row = await db('deliveries')
    .where('team_id', teamId)
    .whereNot('status', 'skipped')
    .where('created_at', '>=', monthStart(now).toISOString())
    .first(db.raw('count(*) FILTER (WHERE created_at >= ?)::int AS day', [dayStart(now).toISOString()]), db.raw('count(*)::int AS month'));
  return { day: row?.day ?? 0, month: row?.month ?? 0 };
}

/**
 * Checks the rows just inserted against the team's quota; answers those to send. `onOver`:
 * `refuse` throws the 429 (the caller's transaction then rolls the rows back), `skip` marks
 * them skipped.
 */
export async function applyMailQuota(trx: Knex, teamId: number, made: NewDelivery[], now: Date, onOver: 'refuse' | 'skip'): Promise<NewDelivery[]> {
  const inserted = await withoutSuppressed(trx, teamId, made);
  if (!inserted.length) return inserted;
  const quota = await mailQuotaOf(trx, teamId);
  if (quota.perDay === null && quota.perMonth === null && quota.perRecipientPerDay === null) return inserted;
  await trx.raw("SELECT pg_advisory_xact_lock(hashtext('mail-quota'), ?::int)", [teamId]);
  const ids = inserted.map((d) => d.id);
  // Per recipient first: a message skipped for its recipient does not count against the team.
  let send = inserted;
  if (quota.perRecipientPerDay !== null) {
    const { rows } = await trx.raw(
      `SELECT lower(email) AS email, count(*)::int AS n FROM deliveries
        WHERE team_id = ? AND lower(email) = ANY(?::text[]) AND created_at >= ? AND status <> 'skipped' AND NOT (id = ANY(?::bigint[]))
        GROUP BY lower(email)`,
      [teamId, [...new Set(inserted.map((d) => d.email.toLowerCase()))], new Date(now.getTime() - 86_400_000).toISOString(), ids],
    );
    const before = new Map((rows as Array<{ email: string; n: number }>).map((r) => [r.email, r.n]));
    const cap = quota.perRecipientPerDay;
    send = inserted.filter((d) => {
      const email = d.email.toLowerCase();
      const n = (before.get(email) ?? 0) + 1;
      before.set(email, n);
      return n <= cap;
    });
  }
  const usage = await mailUsage(trx, teamId, now);
  // The rows just made are counted in usage already; those skipped for their recipient are not counted against the team.
  const counted = { day: usage.day - (inserted.length - send.length), month: usage.month - (inserted.length - send.length) };
  const before = { day: counted.day - send.length, month: counted.month - send.length };
  const over =
    quota.perDay !== null && counted.day > quota.perDay
      ? quotaExceeded('daily', quota.perDay, before.day, send.length, nextDay(now), now.getTime())
      : quota.perMonth !== null && counted.month > quota.perMonth
        ? quotaExceeded('monthly', quota.perMonth, before.month, send.length, nextMonth(now), now.getTime())
        : null;
  if (over && onOver === 'refuse') throw over;
  const skipped = over ? inserted : inserted.filter((d) => !send.includes(d));
  if (skipped.length) {
    await trx('deliveries')
      .whereIn('id', skipped.map((d) => d.id))
      .update({ status: 'skipped', error: over ? `${over.body.quota} email quota reached` : 'recipient daily limit reached', updated_at: trx.fn.now() });
  }
  return over ? [] : send;
}
