import Joi from 'joi';
import { newUid } from '../ids/ids';
import { defineJob, jobMetaSchema, QUEUES } from './queues';

/**
 * A message about the account, by the id of what it is about: a sign-in link to email (a
 * sign-in, an invitation to a team, a sign-up to finish) by the link's uid, whose token the
 * mail worker makes from the uid and APP_KEY, so the job in Redis carries no credential; or
 * the notice to a team's owners and admins that the service turned a webhook off.
 */
export type AccountMailJob = { linkUid: string; webhookId?: undefined } | { webhookId: number; linkUid?: undefined };

export const accountMailJob = defineJob<AccountMailJob>({
  queue: QUEUES.accountEmails,
  schema: Joi.object({ linkUid: Joi.string().alphanum().length(16), webhookId: Joi.number().integer().min(1), meta: jobMetaSchema }).xor('linkUid', 'webhookId'),
  // An SMTP server refusing for a while, or the link's transaction not yet visible: tried
  // again for about half an hour (the link itself works for 15 minutes to 7 days).
  defaults: { attempts: 12, backoff: { type: 'capped' } },
});

/** Random, never a row id (see newMailJobId). */
export const newAccountMailJobId = () => `acct-${newUid()}`;
