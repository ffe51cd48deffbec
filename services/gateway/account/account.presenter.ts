import { periodOf } from '../../../shared/usage/event-limit';
import type { Account } from './account.service';

/** The account as `GET /api/account` shows it. */
export function toAccountJson({ account, now, usage, quota, mail }: Account) {
  return {
    user: { id: `usr_${account.user_uid}`, name: account.user_name, email: account.user_email },
    team: { id: `team_${account.team_uid}`, name: account.team_name },
    plan: { id: account.plan_id, name: account.plan_name, monthly_event_limit: usage.limit },
    usage: { period: periodOf(now), ...usage, limit_type: 'monthly' as const },
    email: { sent_today: mail.day, per_day: quota.perDay, sent_this_month: mail.month, per_month: quota.perMonth, per_recipient_per_day: quota.perRecipientPerDay },
  };
}
