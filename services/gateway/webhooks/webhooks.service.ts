import { isIP } from 'node:net';
import type { Knex } from '../../../shared/db/knex';
import { conflict, notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { isAllowedAddress, parseNetworks } from '../../../shared/net/networks';
import { onItsWay, recordWebhookEvent } from '../../../shared/webhooks/outbox';
import { newSigningSecret, sealSecret } from '../../../shared/webhooks/secrets';
import type { AppContext } from '../context';
import { idListing } from '../http/cursor';

type Deps = Pick<AppContext, 'db' | 'config' | 'clock'>;

export interface WebhookRow {
  id: number;
  uid: string;
  team_id: number;
  url: string;
  event_types: string[] | null;
  description: string | null;
  is_active: boolean;
  /** Sealed (shared/webhooks/secrets.ts): shown in plain once, when made. */
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookInput {
  url: string;
  event_types?: string[] | null;
  description?: string | null;
  is_active?: boolean;
}

/** A team's webhooks at most. */
const WEBHOOKS_PER_TEAM = 20;
/** How long the secret a rotation replaced still signs beside the new one. */
const ROTATION_GRACE_HOURS = 24;


const live = (db: Knex) => db('webhooks').whereNull('deleted_at');

/** The URL's problem for an endpoint, if any: https (http when allowed), no credentials, no address that is not public. */
function urlProblem(deps: Deps, raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'The url field must be a valid URL.';
  }
  const schemes = deps.config.webhookAllowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return deps.config.webhookAllowHttp ? 'The url field must be an http or https URL.' : 'The url field must be an https URL.';
  if (url.username || url.password) return 'The url field must not carry a user name or password.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const allowed = parseNetworks(deps.config.webhookAllowedNetworks);
  if (isIP(host) && !isAllowedAddress(host, allowed)) return 'The url field must name a public address.';
  if ((host === 'localhost' || host.endsWith('.localhost')) && !isAllowedAddress('127.0.0.1', allowed)) return 'The url field must name a public address.';
  return null;
}

function checkInput(deps: Deps, input: WebhookInput): void {
  const problem = urlProblem(deps, input.url);
  if (problem) throw validationFailed({ url: [problem] });
}

export async function listWebhooks(db: Knex, teamId: number): Promise<WebhookRow[]> {
  return live(db).select('*').where({ team_id: teamId }).orderBy('id');
}

export async function requireWebhook(db: Knex, teamId: number, publicId: string, lock = false): Promise<WebhookRow> {
  const uid = uidFromPublicId('wh_', publicId);
  const q = live(db).first('*').where({ team_id: teamId, uid: uid ?? '' });
  if (lock) q.forUpdate();
  const row = uid ? await q : undefined;
  if (!row) throw notFound('Webhook');
  return row;
}

/** A new webhook, and its secret in plain (answered this once). */
export async function createWebhook(deps: Deps, teamId: number, input: WebhookInput): Promise<{ row: WebhookRow; secret: string }> {
  checkInput(deps, input);
  const secret = newSigningSecret();
  return deps.db.transaction(async (trx) => {
    await trx('teams').where({ id: teamId }).forUpdate().first('id'); // one count at a time per team
    const [{ count }] = await live(trx).where({ team_id: teamId }).count<{ count: string }[]>('* as count');
    if (Number(count) >= WEBHOOKS_PER_TEAM) throw conflict(`A team may have at most ${WEBHOOKS_PER_TEAM} webhooks; delete one first.`);
    const [row] = await trx('webhooks')
      .insert({
        uid: newUid(),
        team_id: teamId,
        url: input.url,
        event_types: input.event_types ?? null,
        description: input.description || null,
        is_active: input.is_active ?? true,
        secret_enc: sealSecret(deps.config.appKey, secret),
      })
      .returning('*');
    return { row: row as WebhookRow, secret };
  });
}

/** PUT: `url` is required; an omitted optional field keeps its value. Turning a webhook on again clears why it was turned off. */
export async function updateWebhook(deps: Deps, teamId: number, publicId: string, input: WebhookInput): Promise<WebhookRow> {
  checkInput(deps, input);
  return deps.db.transaction(async (trx) => {
    const current = await requireWebhook(trx, teamId, publicId, true);
    const changes: Partial<WebhookRow> = { url: input.url };
    if (input.event_types !== undefined) changes.event_types = input.event_types;
    if (input.description !== undefined) changes.description = input.description || null;
    if (input.is_active !== undefined) {
      changes.is_active = input.is_active;
      if (input.is_active && !current.is_active) Object.assign(changes, { failing_since: null, disabled_reason: null, disabled_notified_at: null });
    }
    const [row] = await trx('webhooks')
      .where({ id: current.id })
      .update({ ...changes, updated_at: trx.fn.now() })
      .returning('*');
    return row as WebhookRow;
  });
}

/** Deleted: no more deliveries (pending ones are dropped by the worker when it comes to them). */
export async function deleteWebhook(deps: Deps, teamId: number, publicId: string): Promise<WebhookRow> {
  const current = await requireWebhook(deps.db, teamId, publicId);
  await deps.db('webhooks').where({ id: current.id }).update({ deleted_at: deps.db.fn.now(), is_active: false });
  return current;
}

/** A new secret; the one it replaces signs beside it for 24 hours, so receivers can switch without losing a delivery. */
export async function rotateSecret(deps: Deps, teamId: number, publicId: string): Promise<{ row: WebhookRow; secret: string }> {
  const secret = newSigningSecret();
  return deps.db.transaction(async (trx) => {
    const current = await requireWebhook(trx, teamId, publicId, true);
    const [row] = await trx('webhooks')
      .where({ id: current.id })
      .update({
        secret_enc: sealSecret(deps.config.appKey, secret),
        previous_secret_enc: current.secret_enc,
        previous_secret_expires_at: trx.raw(`now() + interval '${ROTATION_GRACE_HOURS} hours'`),
        updated_at: trx.fn.now(),
      })
      .returning('*');
    return { row: row as WebhookRow, secret };
  });
}

/** Queues a `webhook.test` message to this webhook alone (active or not: it is how one checks an endpoint). */
export async function sendTest(deps: Deps, teamId: number, publicId: string): Promise<string> {
  const hook = await requireWebhook(deps.db, teamId, publicId);
  const [uid] = await recordWebhookEvent(deps.db, {
    teamId,
    type: 'webhook.test',
    resource: `webhook:${hook.uid}`,
    data: { webhook: `wh_${hook.uid}`, message: 'A test event from the calendar service.' },
    at: deps.clock.now(),
    webhookId: hook.id,
  });
  return uid;
}

export interface DeliveryRow {
  id: number;
  uid: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  type: string;
  message_uid: string;
}

export interface AttemptRow {
  delivery_id: number;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  response_body: string | null;
  error: string | null;
  created_at: string;
}

const DELIVERIES = idListing('webhook-deliveries');

/** A page of a webhook's deliveries, newest first, each with its attempts. */
export async function listDeliveries(deps: Deps, teamId: number, publicId: string, q: { per_page: number; cursor?: string; status?: string }) {
  const hook = await requireWebhook(deps.db, teamId, publicId);
  const beforeId = DELIVERIES.after(deps.config.appKey, q.cursor)?.[0];
  // One snapshot for both reads: a delivery and its attempts as one moment left them (the
  // worker records an attempt and the next one's time together).
  const { page, attempts } = await deps.db.transaction(
    async (trx) => {
      const query = trx('webhook_deliveries as d')
        .join('webhook_messages as m', 'm.id', 'd.message_id')
        .select('d.*', 'm.type', 'm.uid as message_uid')
        .where('d.webhook_id', hook.id)
        .orderBy('d.id', 'desc')
        .limit(DELIVERIES.fetchLimit(q.per_page));
      if (beforeId !== undefined) query.where('d.id', '<', beforeId);
      if (q.status) query.where('d.status', q.status);
      const rows: DeliveryRow[] = await query;
      const shown = DELIVERIES.page(deps.config.appKey, rows, q.per_page, (last) => [last.id]);
      const tries: AttemptRow[] = shown.rows.length
        ? await trx('webhook_attempts').whereIn('delivery_id', shown.rows.map((r) => r.id)).orderBy(['delivery_id', 'attempt'])
        : [];
      return { page: shown, attempts: tries };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
  return {
    rows: page.rows.map((row) => ({ row, attempts: attempts.filter((a) => a.delivery_id === row.id) })),
    nextCursor: page.nextCursor,
  };
}

/**
 * A failed (or pending) delivery tried again now; its attempts go on counting. One on its
 * way (relayed, its attempt perhaps being made) is left to that attempt: relaying it again
 * would send it twice.
 */
export async function retryDelivery(deps: Deps, teamId: number, publicId: string, deliveryPublicId: string) {
  const hook = await requireWebhook(deps.db, teamId, publicId);
  const uid = uidFromPublicId('whd_', deliveryPublicId);
  const goingNow = `webhook_deliveries.status = 'pending' AND ${onItsWay('webhook_deliveries')}`;
  const [row] = await deps.db('webhook_deliveries')
    .where({ webhook_id: hook.id, uid: uid ?? '' })
    .whereIn('status', ['failed', 'pending'])
    .update({
      status: 'pending',
      next_attempt_at: deps.db.raw(`CASE WHEN ${goingNow} THEN next_attempt_at ELSE now() END`),
      relayed_at: deps.db.raw(`CASE WHEN ${goingNow} THEN relayed_at END`),
      updated_at: deps.db.fn.now(),
    })
    .returning('uid');
  if (!row) {
    const exists = uid ? await deps.db('webhook_deliveries').first('id').where({ webhook_id: hook.id, uid }) : undefined;
    if (!exists) throw notFound('Delivery');
    throw conflict('The delivery has succeeded; there is nothing to retry.');
  }
  return `whd_${row.uid}`;
}
