import Joi from 'joi';
import { newUid } from '../ids/ids';
import { defineJob, jobMetaSchema, QUEUES } from './queues';

/**
 * A sign-in link to email (a sign-in, an invitation to a team, a sign-up to finish): only
 * the link's uid. The mail worker reads the rest from the link's row and makes the token
 * from the uid and APP_KEY, so the job in Redis carries no credential.
 */
export interface AccountMailJob {
  linkUid: string;
}

export const accountMailJob = defineJob<AccountMailJob>({
  queue: QUEUES.accountEmails,
  schema: Joi.object({ linkUid: Joi.string().alphanum().length(16).required(), meta: jobMetaSchema }),
  // An SMTP server refusing for a while, or the link's transaction not yet visible: tried
  // again for about half an hour (the link itself works for 15 minutes to 7 days).
  defaults: { attempts: 12, backoff: { type: 'capped' } },
});

/** Random, never a row id (see newMailJobId). */
export const newAccountMailJobId = () => `acct-${newUid()}`;
