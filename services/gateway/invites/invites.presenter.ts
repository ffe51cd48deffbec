import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { publicId } from '../../../shared/ids/ids';
import type { InviteeWithDelivery } from './invites.repository';

/** An invitee with its newest message (docs/email.md). */
export function toInviteeJson(row: InviteeWithDelivery) {
  const d = row.last_delivery;
  return {
    id: publicId('inv_', row.uid),
    email: row.email,
    name: row.name,
    created_at: pgTimestampToIsoMicros(row.created_at),
    last_delivery: d
      ? { kind: d.kind, status: d.status, attempts: d.attempts, error: d.error, sent_at: d.sent_at ? pgTimestampToIsoMicros(d.sent_at) : null }
      : null,
  };
}
