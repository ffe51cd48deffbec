import type { Knex } from '../db/knex';
import { newUid } from '../ids/ids';

/** What a webhook can be told about. `webhook.test` is sent only by the test endpoint, to that webhook alone. */
export const WEBHOOK_EVENT_TYPES = [
  'event.created',
  'event.updated',
  'event.deleted',
  'event.approved',
  'event.rejected',
  'rsvp.created',
  'rsvp.updated',
  'rsvp.deleted',
  'subscriber.created',
  'extraction.completed',
  'extraction.failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The body every delivery of a message carries. */
interface WebhookPayload {
  type: WebhookEventType | 'webhook.test';
  /** When the change happened, ISO 8601 UTC. */
  timestamp: string;
  /** The resource as the API shows it. */
  data: Record<string, unknown>;
}

/**
 * Records that something happened, for every active webhook of the team that listens for
 * it: one message (its uid is the `webhook-id` of every delivery, retries included) and a
 * pending delivery per webhook, in one statement. Call it inside the transaction that makes
 * the change, so both commit or neither does. A team without such webhooks writes nothing.
 * Answers the uids of the deliveries made.
 * `resource` names what the message is about (`event:<uid>`): deliveries to one webhook
 * about one resource are made in the order they were recorded.
 */
export async function recordWebhookEvent(
  trx: Knex,
  message: { teamId: number; type: WebhookPayload['type']; resource: string; data: Record<string, unknown>; at: Date; webhookId?: number },
): Promise<string[]> {
  const payload: WebhookPayload = { type: message.type, timestamp: message.at.toISOString(), data: message.data };
  const { rows } = await trx.raw(
    `WITH targets AS (
       SELECT id FROM webhooks
        WHERE team_id = :teamId AND is_active AND deleted_at IS NULL
          AND (:webhookId::bigint IS NULL OR id = :webhookId::bigint)
          AND (:webhookId::bigint IS NOT NULL OR event_types IS NULL OR :type = ANY (event_types))
     ), message AS (
       INSERT INTO webhook_messages (uid, team_id, type, resource, payload)
       SELECT :uid, :teamId, :type, :resource, :payload::jsonb WHERE EXISTS (SELECT 1 FROM targets)
       RETURNING id
     )
     INSERT INTO webhook_deliveries (uid, webhook_id, message_id, resource, next_attempt_at)
     SELECT substr(md5(gen_random_uuid()::text), 1, 16), targets.id, message.id, :resource, now() FROM targets, message
     RETURNING uid`,
    {
      teamId: message.teamId,
      webhookId: message.webhookId ?? null,
      type: message.type,
      uid: newUid(),
      resource: message.resource,
      payload: JSON.stringify(payload),
    },
  );
  return (rows as Array<{ uid: string }>).map((r) => r.uid);
}
