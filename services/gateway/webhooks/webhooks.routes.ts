import Joi from 'joi';
import { pgTimestampToIsoMicrosOrNull } from '../../../shared/calendar/dates';
import { WEBHOOK_EVENT_TYPES } from '../../../shared/webhooks/event-types';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { accepted, defineRoute, ok, type RouteSpec } from '../http/route';
import { bool, cursorParam, idParam, text } from '../http/validation';
import {
  type AttemptRow,
  createWebhook,
  deleteWebhook,
  type DeliveryRow,
  listDeliveries,
  listWebhooks,
  requireWebhook,
  retryDelivery,
  rotateSecret,
  sendTest,
  updateWebhook,
  type WebhookInput,
  type WebhookRow,
} from './webhooks.service';


function toWebhookJson(row: WebhookRow) {
  return {
    id: `wh_${row.uid}`,
    url: row.url,
    event_types: row.event_types,
    description: row.description,
    is_active: row.is_active,
    disabled_reason: row.disabled_reason,
    failing_since: pgTimestampToIsoMicrosOrNull(row.failing_since),
    created_at: pgTimestampToIsoMicrosOrNull(row.created_at),
    updated_at: pgTimestampToIsoMicrosOrNull(row.updated_at),
  };
}

function toDeliveryJson({ row, attempts }: { row: DeliveryRow; attempts: AttemptRow[] }) {
  return {
    id: `whd_${row.uid}`,
    message_id: `msg_${row.message_uid}`,
    type: row.type,
    status: row.status,
    next_attempt_at: row.status === 'pending' ? pgTimestampToIsoMicrosOrNull(row.next_attempt_at) : null,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      response_body: a.response_body,
      error: a.error,
      at: pgTimestampToIsoMicrosOrNull(a.created_at),
    })),
    created_at: pgTimestampToIsoMicrosOrNull(row.created_at),
    updated_at: pgTimestampToIsoMicrosOrNull(row.updated_at),
  };
}

const timestamp = () => Joi.string().description('ISO 8601 UTC with microseconds');
const webhookSchema = Joi.object({
  id: Joi.string().pattern(/^wh_/).required(),
  url: Joi.string().required(),
  event_types: Joi.array().items(Joi.string()).allow(null).required().description('null: every type'),
  description: Joi.string().allow(null).required(),
  is_active: Joi.boolean().required(),
  disabled_reason: Joi.string().allow(null).required().description('Why the service turned it off (every attempt failing for 5 days)'),
  failing_since: timestamp().allow(null).required(),
  created_at: timestamp().required(),
  updated_at: timestamp().required(),
}).meta({ title: 'Webhook' });
const withSecret = webhookSchema
  .keys({ secret: Joi.string().pattern(/^whsec_/).required().description('The signing secret (Standard Webhooks); shown only here') })
  .meta({ title: 'WebhookWithSecret' });
const deliverySchema = Joi.object({
  id: Joi.string().pattern(/^whd_/).required(),
  message_id: Joi.string().pattern(/^msg_/).required().description('The webhook-id header of every attempt'),
  type: Joi.string().required(),
  status: Joi.string().valid('pending', 'succeeded', 'failed').required(),
  next_attempt_at: timestamp().allow(null).required(),
  attempts: Joi.array()
    .items(
      Joi.object({
        attempt: Joi.number().integer().required(),
        status_code: Joi.number().integer().allow(null).required(),
        duration_ms: Joi.number().integer().required(),
        response_body: Joi.string().allow(null, '').required().description('The first 2 KB of the answer'),
        error: Joi.string().allow(null).required(),
        at: timestamp().required(),
      }),
    )
    .required(),
  created_at: timestamp().required(),
  updated_at: timestamp().required(),
}).meta({ title: 'WebhookDelivery' });

const writable = {
  url: Joi.string().max(2048).required().description('https (http only where WEBHOOK_ALLOW_HTTP is set); a public address'),
  event_types: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_TYPES))
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length)
    .unique()
    .allow(null)
    .description('The types to send; null or omitted: every type'),
  description: text(500).allow(null, ''),
  is_active: bool(),
};
const webhookBody = Joi.object(writable).unknown(true);
const whParams = Joi.object({ wh: idParam('wh_') });

type WhParams = { wh: string };

export function webhookRoutes(ctx: AppContext): RouteSpec[] {
  const tags = ['Webhooks'];
  return [
    defineRoute({
      method: 'get',
      path: '/api/webhooks',
      operationId: 'listWebhooks',
      summary: "List the team's webhooks",
      description: 'Oldest first. Secrets are never shown again after creation.',
      tags,
      auth: true,
      responses: { 200: { description: 'The webhooks', body: dataListOf(webhookSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => ok({ data: (await listWebhooks(ctx.db, authOf(req).teamId)).map(toWebhookJson) }),
    }),
    defineRoute<Record<string, never>, Record<string, never>, WebhookInput>({
      method: 'post',
      path: '/api/webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook',
      description: `Deliveries are signed as Standard Webhooks v1 (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`) with the secret answered here, once. Types: ${WEBHOOK_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. At most 20 webhooks a team (409 beyond).`,
      tags,
      auth: true,
      role: 'admin',
      body: webhookBody,
      responses: { 200: { description: 'The new webhook and its secret', body: dataOf(withSecret) }, ...errors(400, 401, 409, 413, 415, 422, 503) },
      handler: async ({ body }, req) => {
        const { row, secret } = await createWebhook(ctx, authOf(req).teamId, body);
        return ok({ data: { ...toWebhookJson(row), secret } });
      },
    }),
    defineRoute<WhParams>({
      method: 'get',
      path: '/api/webhooks/:wh',
      operationId: 'getWebhook',
      summary: 'Get a webhook',
      description: "One webhook of the team; another team's is a 404.",
      tags,
      auth: true,
      params: whParams,
      responses: { 200: { description: 'The webhook', body: dataOf(webhookSchema) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: toWebhookJson(await requireWebhook(ctx.db, authOf(req).teamId, params.wh)) }),
    }),
    defineRoute<WhParams, Record<string, never>, WebhookInput>({
      method: 'put',
      path: '/api/webhooks/:wh',
      operationId: 'updateWebhook',
      summary: 'Update a webhook',
      description: '`url` is required; an omitted optional field keeps its value. `is_active: true` turns on a webhook the service turned off.',
      tags,
      auth: true,
      role: 'admin',
      params: whParams,
      body: webhookBody,
      responses: { 200: { description: 'The webhook', body: dataOf(webhookSchema) }, ...errors(400, 401, 404, 413, 415, 422, 503) },
      handler: async ({ params, body }, req) => ok({ data: toWebhookJson(await updateWebhook(ctx, authOf(req).teamId, params.wh, body)) }),
    }),
    defineRoute<WhParams>({
      method: 'delete',
      path: '/api/webhooks/:wh',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      description: 'Nothing more is delivered to it, pending deliveries included.',
      tags,
      auth: true,
      role: 'admin',
      params: whParams,
      responses: {
        200: { description: 'Deleted', body: Joi.object({ data: Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() }).required() }) },
        ...errors(401, 404, 503),
      },
      handler: async ({ params }, req) => {
        const row = await deleteWebhook(ctx, authOf(req).teamId, params.wh);
        return ok({ data: { id: `wh_${row.uid}`, deleted: true } });
      },
    }),
    defineRoute<WhParams>({
      method: 'post',
      path: '/api/webhooks/:wh/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: "Replace a webhook's secret",
      description: 'Answers the new secret, once. For 24 hours the old one signs too: each delivery carries both signatures, so a receiver can switch without losing one.',
      tags,
      auth: true,
      role: 'admin',
      params: whParams,
      responses: { 200: { description: 'The webhook and its new secret', body: dataOf(withSecret) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => {
        const { row, secret } = await rotateSecret(ctx, authOf(req).teamId, params.wh);
        return ok({ data: { ...toWebhookJson(row), secret } });
      },
    }),
    defineRoute<WhParams>({
      method: 'post',
      path: '/api/webhooks/:wh/test',
      operationId: 'testWebhook',
      summary: 'Send a webhook.test event',
      description: 'Queues a `webhook.test` delivery to this webhook (even when it is turned off); follow it in its deliveries.',
      tags,
      auth: true,
      role: 'admin',
      params: whParams,
      responses: { 202: { description: 'Queued', body: dataOf(Joi.object({ delivery_id: Joi.string().pattern(/^whd_/).required() })) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => accepted({ data: { delivery_id: `whd_${await sendTest(ctx, authOf(req).teamId, params.wh)}` } }),
    }),
    defineRoute<WhParams, { per_page: number; cursor?: string; status?: string }>({
      method: 'get',
      path: '/api/webhooks/:wh/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "A webhook's deliveries",
      description: 'Newest first, each with its attempts (status code, time taken, the first 2 KB of the answer or the error) and, while pending, when it is tried next.',
      tags,
      auth: true,
      params: whParams,
      query: Joi.object({
        per_page: Joi.number().integer().min(1).max(100).default(25),
        cursor: cursorParam(),
        status: Joi.string().valid('pending', 'succeeded', 'failed'),
      }),
      responses: {
        200: {
          description: 'A page of deliveries',
          body: Joi.object({
            data: Joi.array().items(deliverySchema).required(),
            meta: Joi.object({ per_page: Joi.number().integer().required(), next_cursor: Joi.string().allow(null).required() }).required(),
          }),
        },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ params, query }, req) => {
        const page = await listDeliveries(ctx, authOf(req).teamId, params.wh, query);
        return ok({ data: page.rows.map(toDeliveryJson), meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<{ wh: string; whd: string }>({
      method: 'post',
      path: '/api/webhooks/:wh/deliveries/:whd/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Try a delivery again now',
      description: 'A failed (or pending) delivery is tried again at once, with the same `webhook-id`. One already on its way (its attempt being made) is left to that attempt, so it is not sent twice. One that succeeded is a 409.',
      tags,
      auth: true,
      role: 'admin',
      params: Joi.object({ wh: idParam('wh_'), whd: idParam('whd_') }),
      responses: { 202: { description: 'Queued again', body: dataOf(Joi.object({ delivery_id: Joi.string().required() })) }, ...errors(401, 404, 409, 503) },
      handler: async ({ params }, req) => accepted({ data: { delivery_id: await retryDelivery(ctx, authOf(req).teamId, params.wh, params.whd) } }),
    }),
  ];
}
