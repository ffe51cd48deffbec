import Joi from 'joi';
import { defineJob, jobMetaSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

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

export const webhookJob = defineJob<WebhookJob>({
  queue: QUEUES.webhooks,
  schema: Joi.object({
    deliveries: Joi.array()
      .items(Joi.object({ delivery: Joi.string().pattern(/^[0-9A-Za-z]{16}$/).required(), relay: Joi.number().integer().min(1).required() }))
      .min(1)
      .max(WEBHOOK_JOB_DELIVERIES)
      .required(),
    meta: jobMetaSchema,
  }),
  defaults: RETRY_THROUGH_OUTAGES,
});
