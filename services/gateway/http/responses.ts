import Joi from 'joi';
import type { ResponseSpec } from './route';

/** Response shapes shared by every route, for the OpenAPI document. */
export const messageSchema = Joi.object({ message: Joi.string().required() }).meta({ title: 'Error' });

export const validationErrorSchema = Joi.object({
  message: Joi.string().required(),
  errors: Joi.object()
    .pattern(/^.+$/, Joi.array().items(Joi.string()).min(1))
    .required()
    .description('Field name → its error messages'),
}).meta({ title: 'ValidationError' });

/** What every 422 is said to hold, wherever the document lists one. */
export const VALIDATION_FAILED = 'Validation failed: the failing fields are listed (the first 20), and the message counts every error';

const standard: Record<number, ResponseSpec> = {
  400: { description: 'Malformed JSON', body: messageSchema },
  401: { description: 'Missing, unknown or revoked token (`WWW-Authenticate: Bearer`)', body: messageSchema },
  403: { description: 'Not allowed', body: messageSchema },
  404: { description: 'Unknown id, or an id of another team', body: messageSchema },
  409: { description: 'Conflict', body: messageSchema.unknown(true) },
  413: { description: 'Body over the size limit', body: messageSchema },
  415: { description: 'Body in a content type this endpoint does not take', body: messageSchema },
  422: { description: VALIDATION_FAILED, body: validationErrorSchema },
  429: { description: 'Rate limit (`Retry-After`, `X-RateLimit-Limit`, `X-RateLimit-Remaining`)', body: messageSchema },
  503: { description: 'Postgres or Redis unavailable (`Retry-After`)', body: messageSchema },
};

/** A 429 of a call that sends email: a rate limit, or the team's email quota (with its figures). */
export const mailQuota429: ResponseSpec = {
  description:
    "Rate limit, or the team's daily or monthly email quota would be exceeded (`Retry-After` until it resets; nothing is done): `quota` (daily, monthly), `limit`, `used`, `remaining`, `requested`, `resets_at`",
  body: messageSchema
    .keys({
      quota: Joi.string().valid('daily', 'monthly'),
      limit: Joi.number().integer(),
      used: Joi.number().integer(),
      remaining: Joi.number().integer(),
      requested: Joi.number().integer(),
      resets_at: Joi.string().isoDate(),
    })
    .meta({ title: 'MailQuotaExceeded' }),
};

/** The standard error responses for the given statuses. */
export function errors(...statuses: number[]): Record<number, ResponseSpec> {
  const out: Record<number, ResponseSpec> = {};
  for (const s of statuses) out[s] = standard[s];
  return out;
}

export const dataOf = (schema: Joi.Schema) => Joi.object({ data: schema.required() });
export const dataListOf = (schema: Joi.Schema) => Joi.object({ data: Joi.array().items(schema).required() });
