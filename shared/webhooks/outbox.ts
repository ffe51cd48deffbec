import type { Knex } from '../db/knex';
import { newUid } from '../ids/ids';

import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types';

/**
 * A delivery relayed this long ago and still pending is taken as lost with its job (Redis
 * lost it) and relayed again; one relayed more recently is on its way, and nothing else
 * (the relay, a retry through the API) sends it meanwhile. A Postgres interval.
 */
const RELAY_AGAIN_AFTER = '2 minutes';

/** SQL: the delivery (table alias `d`) is on its way, relayed recently and not yet done (a pending one). */
export const onItsWay = (d: string) => `(${d}.relayed_at IS NOT NULL AND ${d}.relayed_at >= now() - interval '${RELAY_AGAIN_AFTER}')`;
/** SQL: the delivery (alias `d`) may be relayed as far as its claim goes: never relayed, or relayed so long ago its job was lost. */
export const relayable = (d: string) => `(${d}.relayed_at IS NULL OR ${d}.relayed_at < now() - interval '${RELAY_AGAIN_AFTER}')`;
/** SQL: milliseconds until the relay of the delivery (alias `d`) may take it as lost (0 when it may already). */
export const claimLeftMs = (d: string) => `greatest(0, extract(epoch FROM ${d}.relayed_at + interval '${RELAY_AGAIN_AFTER}' - now()) * 1000)::float8`;

/** The body every delivery of a message carries. */
interface WebhookPayload {
  type: WebhookEventType | 'webhook.test';
  /** When the change happened, ISO 8601 UTC. */
  timestamp: string;
  /** The resource as the API shows it. */
  data: Record<string, unknown>;
}

/** A message to record: what happened, to which team, about what. */
interface WebhookMessage {
  teamId: number;
  type: WebhookPayload['type'];
  /** What it is about (`event:<uid>`): deliveries to one webhook about one resource are made in the order recorded. */
  resource: string;
  /** The resource as the API shows it. */
  data: Record<string, unknown>;
  at: Date;
  /** To this webhook alone, whatever its types and even when it is off (`webhook.test`). */
  webhookId?: number;
}

/**
 * Records that something happened, for every active webhook of the team that listens for
 * it: one message (its uid is the `webhook-id` of every delivery, retries included) and a
 * pending delivery per webhook, in one statement. Call it inside the transaction that makes
 * the change, so both commit or neither does. A team without such webhooks writes nothing.
 * Answers the uids of the deliveries made.
 */
export async function recordWebhookEvent(trx: Knex, message: WebhookMessage): Promise<string[]> {
  return recordWebhookEvents(trx, [message]);
}

/** SQL: webhook `w` (not deleted) is on and listens for the type the SQL expression `type` names. */
const listens = (w: string, type: string) => `${w}.is_active AND (${w}.event_types IS NULL OR ${type} = ANY (${w}.event_types))`;

/**
 * SQL: the team whose id the SQL expression `teamId` names has a webhook that listens for
 * `type`. Asked inside the statement that makes a change, it spares a team without such a
 * webhook the building and recording of a message nobody gets.
 */
export const teamListensSql = (teamId: string, type: WebhookEventType): string => {
  if (!WEBHOOK_EVENT_TYPES.includes(type)) throw new Error(`unknown webhook event type ${type}`);
  return `EXISTS (SELECT 1 FROM webhooks lw WHERE lw.team_id = ${teamId} AND lw.deleted_at IS NULL AND ${listens('lw', `'${type}'`)})`;
};

/**
 * Whether webhook `w` gets message `i`: the one a message is addressed to (a test send, even
 * to a webhook that is off), else every active webhook of the team that listens for its type.
 */
const GETS_MESSAGE = `w.team_id = i.team_id AND w.deleted_at IS NULL
  AND ((i.webhook_id IS NOT NULL AND w.id = i.webhook_id)
    OR (i.webhook_id IS NULL AND ${listens('w', 'i.type')}))`;

/**
 * Many messages (a worker's batch), in the order given: the messages some webhook gets, then
 * their deliveries, each statement joining its rows to the team's webhooks through their
 * index, so a batch costs in proportion to its size (joining the two sets of rows to each
 * other, as one statement did, was planned as a nested loop, quadratic in the batch).
 */
export async function recordWebhookEvents(trx: Knex, messages: WebhookMessage[]): Promise<string[]> {
  if (!messages.length) return [];
  const input = messages.map((m, ord) => ({
    ord,
    uid: newUid(),
    team_id: m.teamId,
    type: m.type,
    resource: m.resource,
    webhook_id: m.webhookId ?? null,
    payload: { type: m.type, timestamp: m.at.toISOString(), data: m.data } satisfies WebhookPayload,
  }));
  // The body is kept as the text sent (a json field of the record set is its text as
  // written: compact, keys in this order), not re-encoded as jsonb.
  const { rows: recorded } = await trx.raw(
    `INSERT INTO webhook_messages (uid, team_id, type, resource, body)
     SELECT uid, team_id, type, resource, payload::text
       FROM json_to_recordset(?::json) AS i(ord int, uid text, team_id bigint, type text, resource text, webhook_id bigint, payload json)
      WHERE EXISTS (SELECT 1 FROM webhooks w WHERE ${GETS_MESSAGE})
      ORDER BY ord
     RETURNING id, uid`,
    [JSON.stringify(input)],
  );
  if (!recorded.length) return [];
  const ids = new Map((recorded as Array<{ id: string; uid: string }>).map((r) => [r.uid, r.id]));
  const { rows } = await trx.raw(
    `INSERT INTO webhook_deliveries (uid, webhook_id, message_id, resource, next_attempt_at)
     SELECT substr(md5(gen_random_uuid()::text), 1, 16), w.id, i.id, i.resource, now()
       FROM json_to_recordset(?::json) AS i(id bigint, team_id bigint, type text, resource text, webhook_id bigint)
       JOIN webhooks w ON ${GETS_MESSAGE}
      ORDER BY i.id, w.id
     RETURNING uid`,
    [JSON.stringify(input.filter((m) => ids.has(m.uid)).map((m) => ({ id: ids.get(m.uid), team_id: m.team_id, type: m.type, resource: m.resource, webhook_id: m.webhook_id })))],
  );
  return (rows as Array<{ uid: string }>).map((r) => r.uid);
}

/** Which of these teams have an active webhook that listens for `type` (to skip building messages nobody gets). */
export async function teamsListening(trx: Knex, teamIds: number[], type: WebhookEventType): Promise<Set<number>> {
  if (!teamIds.length) return new Set();
  const rows = await trx('webhooks')
    .distinct('team_id')
    .whereIn('team_id', teamIds)
    .whereNull('deleted_at')
    .whereRaw(listens('webhooks', '?::text'), [type]);
  return new Set(rows.map((r: { team_id: string | number }) => Number(r.team_id)));
}
