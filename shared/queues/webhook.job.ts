import Joi from 'joi';
import { defineJob, jobMetaSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

/**
 * The webhooks queue: one delivery attempt to make. The job names the delivery row only;
 * Postgres holds the message, the state and the schedule. The worker's relay puts each due
 * delivery here as `<delivery uid>-<relay>`, counting its relays: a job whose relay is no
 * longer the delivery's latest (it was relayed again, its first job seemingly lost) does
 * nothing, so one relay is at most one attempt. Retries of the endpoint's failures are
 * scheduled in the row, not by BullMQ; BullMQ's retries are for Postgres outages only.
 */
export interface WebhookJob {
  delivery: string;
  relay: number;
}

export const webhookJob = defineJob<WebhookJob>({
  queue: QUEUES.webhooks,
  schema: Joi.object({ delivery: Joi.string().pattern(/^[0-9A-Za-z]{16}$/).required(), relay: Joi.number().integer().min(1).required(), meta: jobMetaSchema }),
  defaults: RETRY_THROUGH_OUTAGES,
});
