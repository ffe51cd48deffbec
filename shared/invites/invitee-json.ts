import { pgTimestampToIsoMicros, pgTimestampToIsoMicrosOrNull } from '../calendar/dates';
import type { Knex } from '../db/knex';
import { publicId } from '../ids/ids';
import type { MailKind } from '../queues/mail.job';

export interface InviteeRow {
  id: number;
  uid: string;
  team_id: number;
  event_id: number;
  email: string;
  name: string | null;
  created_at: string;
  updated_at: string;
  response: InviteeResponse | null;
  responded_at: string | null;
  /** The SEQUENCE of the invitation or update the response answered. */
  response_sequence: number | null;
}

/** An invitee's answer, as calendar apps' PARTSTAT names it (in lower case). */
export type InviteeResponse = 'accepted' | 'declined' | 'tentative';

interface LastDelivery {
  kind: MailKind;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  error: string | null;
  sent_at: string | null;
}

export interface InviteeWithDelivery extends InviteeRow {
  last_delivery: LastDelivery | null;
  /** The response answers an older invitation or update than the newest sent to the invitee. */
  response_stale: boolean;
}

export const INVITEE_COLUMNS = [
  'id', 'uid', 'team_id', 'event_id', 'email', 'name', 'created_at', 'updated_at',
  'response', 'responded_at', 'response_sequence',
] as const;

/**
 * The highest SEQUENCE of an invitation or update made for invitee `i` (0: none yet): the
 * version of the event their calendar app holds, which a response should answer.
 */
export const LATEST_SENT_SEQUENCE = `COALESCE((SELECT max(x.sequence) FROM deliveries x
         WHERE x.invitee_id = i.id AND x.kind IN ('invitation', 'update')), 0)`;

/**
 * Invitees (`i`) with their newest message and whether their response is stale (it answers
 * an older version than the newest they were sent, derived, so an update made after the
 * answer makes it stale too); the caller adds WHERE, ORDER BY, LIMIT.
 */
export const INVITEES_WITH_LAST_DELIVERY = `SELECT ${INVITEE_COLUMNS.map((c) => `i.${c}`).join(', ')},
            CASE WHEN d.id IS NULL THEN NULL ELSE json_build_object(
              'kind', d.kind, 'status', d.status, 'attempts', d.attempts, 'error', d.error, 'sent_at', d.sent_at::text
            ) END AS last_delivery,
            (i.response IS NOT NULL AND i.response_sequence < ${LATEST_SENT_SEQUENCE}) AS response_stale
       FROM invitees i
       LEFT JOIN LATERAL (
         SELECT id, kind, status, attempts, error, sent_at FROM deliveries
          WHERE invitee_id = i.id ORDER BY id DESC LIMIT 1
       ) d ON true`;

/** These invitees (by row id) as the API shows them, in id order. */
export async function inviteesWithLastDelivery(db: Knex, ids: number[]): Promise<InviteeWithDelivery[]> {
  if (!ids.length) return [];
  const { rows } = await db.raw(`${INVITEES_WITH_LAST_DELIVERY} WHERE i.id = ANY(?::bigint[]) ORDER BY i.id`, [ids]);
  return rows as InviteeWithDelivery[];
}


/** An invitee with its newest message (docs/email.md), as the API shows it and webhooks are told of it. */
export function toInviteeJson(row: InviteeWithDelivery) {
  const d = row.last_delivery;
  return {
    id: publicId('inv_', row.uid),
    email: row.email,
    name: row.name,
    created_at: pgTimestampToIsoMicros(row.created_at),
    last_delivery: d
      ? { kind: d.kind, status: d.status, attempts: d.attempts, error: d.error, sent_at: pgTimestampToIsoMicrosOrNull(d.sent_at) }
      : null,
    response: row.response,
    responded_at: pgTimestampToIsoMicrosOrNull(row.responded_at),
    response_stale: row.response_stale,
  };
}
