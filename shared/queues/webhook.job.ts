import { compiledSchema } from './json-schema';
import { defineJob, jobMetaJsonSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

/** Deliveries one job holds at most (all to one webhook). */
export const WEBHOOK_JOB_DELIVERIES = 100;

/**
 * The webhooks queue: attempts to make, up to 100 deliveries of one webhook. The job names
 * the delivery rows only; Postgres holds the messages, the state and the schedule. The
 * worker's relay puts due deliveries here, counting each one's relays: a delivery whose
 * relay is no longer the one named here (it was relayed again, its first job seemingly
 * lost) is left alone, so one relay is at most one attempt. Retries of the endpoint's
 * failures are scheduled in the rows, not by BullMQ; BullMQ's retries are for Postgres
 * outages only.
 */
export interface WebhookJob {
  deliveries: Array<{ delivery: string; relay: number }>;
}

/** Checked by a compiled JSON Schema (json-schema.ts): every delivery passes through this queue. */
export const webhookJob = defineJob<WebhookJob>({
  queue: QUEUES.webhooks,
  schema: compiledSchema<WebhookJob>({
    type: 'object',
    properties: {
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          properties: { delivery: { type: 'string', pattern: '^[0-9A-Za-z]{16}$' }, relay: { type: 'integer', minimum: 1 } },
          required: ['delivery', 'relay'],
          additionalProperties: false,
        },
        minItems: 1,
        maxItems: WEBHOOK_JOB_DELIVERIES,
      },
      meta: jobMetaJsonSchema,
    },
    required: ['deliveries'],
    additionalProperties: false,
  }),
  defaults: RETRY_THROUGH_OUTAGES,
});
