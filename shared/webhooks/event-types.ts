/**
 * What a webhook can be told about: one list for the outbox, the API's validation and the
 * dashboard's choices (this module imports nothing, so the dashboard's bundle can take it).
 * `webhook.test` is sent only by the test endpoint, to that webhook alone.
 */
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
  'invitee.delivery_failed',
  'invitee.replied',
  'extraction.completed',
  'extraction.failed',
  'smart_link.submission_processed',
  'smart_link.submission_failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
