import Joi from 'joi';
import { idParam } from '../http/validation';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors, messageSchema, validationErrorSchema } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { SUBMISSION_LIMIT_BYTES } from './ingest/body';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../../shared/webhooks/signature';
import {
  createSmartLinkBody,
  type SmartLinkInput,
  smartLinkParams,
  smartLinkSchema,
  submissionFields,
  submissionSchema,
  submissionsQuery,
  updateSmartLinkBody,
} from './smart-links.schemas';
import {
  createSmartLink,
  deleteSmartLink,
  getSubmission,
  listLinks,
  listSubmissions,
  requireSmartLink,
  rotateSecret,
  toSmartLinkJson,
  updateSmartLink,
} from './smart-links.service';

type SlParams = { sl: string };

export function smartLinkRoutes(ctx: AppContext): RouteSpec[] {
  const base = ctx.config.publicBaseUrl;
  const tags = ['Smart links'];
  const one = dataOf(smartLinkSchema);

  return [
    defineRoute<Record<string, never>, Record<string, never>, SmartLinkInput>({
      method: 'post',
      path: '/api/smart-links',
      operationId: 'createSmartLink',
      summary: 'Create a smart link',
      description: 'Forms and webhooks post to its `url` with no token. The answer is the only one that shows `signing_secret` (until a rotation).',
      tags,
      auth: true,
      role: 'admin',
      body: createSmartLinkBody,
      responses: { 200: { description: 'The new link, with its signing secret', body: one }, ...errors(400, 401, 413, 415, 422, 503) },
      handler: async ({ body }, req) => {
        const { link, secret } = await createSmartLink(ctx, authOf(req).teamId, body);
        return ok({ data: toSmartLinkJson(link, base, secret) });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/smart-links',
      operationId: 'listSmartLinks',
      summary: "The team's smart links",
      description: 'Every smart link of the team with its URL, calendar and settings (secrets are never shown again after creation).',
      tags,
      auth: true,
      responses: { 200: { description: 'The links', body: dataListOf(smartLinkSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => ok({ data: (await listLinks(ctx, authOf(req).teamId)).map((l) => toSmartLinkJson(l, base)) }),
    }),
    defineRoute<SlParams>({
      method: 'get',
      path: '/api/smart-links/:sl',
      operationId: 'getSmartLink',
      summary: 'A smart link',
      description: 'One smart link with its URL, calendar and settings; another team\'s link is a 404.',
      tags,
      auth: true,
      params: smartLinkParams,
      responses: { 200: { description: 'The link', body: one }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: toSmartLinkJson(await requireSmartLink(ctx, authOf(req).teamId, params.sl), base) }),
    }),
    defineRoute<SlParams, Record<string, never>, SmartLinkInput>({
      method: 'put',
      path: '/api/smart-links/:sl',
      operationId: 'updateSmartLink',
      summary: 'Update a smart link',
      description: '`name` and `calendar` are required; omitted optional fields keep their value.',
      tags,
      auth: true,
      role: 'admin',
      params: smartLinkParams,
      body: updateSmartLinkBody,
      responses: { 200: { description: 'The link', body: one }, ...errors(400, 401, 404, 413, 415, 422, 503) },
      handler: async ({ params, body }, req) => ok({ data: toSmartLinkJson(await updateSmartLink(ctx, authOf(req).teamId, params.sl, body), base) }),
    }),
    defineRoute<SlParams>({
      method: 'delete',
      path: '/api/smart-links/:sl',
      operationId: 'deleteSmartLink',
      summary: 'Delete a smart link (its URL answers 404 from then on)',
      description: 'Deletes the link: its URL answers 404 from then on. Submissions already queued are still written; their records stay.',
      tags,
      auth: true,
      role: 'admin',
      params: smartLinkParams,
      responses: {
        200: { description: 'Deleted', body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) },
        ...errors(401, 404, 503),
      },
      handler: async ({ params }, req) => {
        const link = await deleteSmartLink(ctx, authOf(req).teamId, params.sl);
        return ok({ data: { id: `sl_${link.uid}`, deleted: true } });
      },
    }),
    defineRoute<SlParams>({
      method: 'post',
      path: '/api/smart-links/:sl/rotate-secret',
      operationId: 'rotateSmartLinkSecret',
      summary: 'A new signing secret; the previous one keeps verifying for 24 hours',
      description: 'A new signing secret for a signed link, shown once in the answer. The previous secret keeps verifying for 24 hours, so the sender can switch without losing submissions.',
      tags,
      auth: true,
      role: 'admin',
      params: smartLinkParams,
      responses: { 200: { description: 'The link with its new signing secret', body: one }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => {
        const { link, secret } = await rotateSecret(ctx, authOf(req).teamId, params.sl);
        return ok({ data: toSmartLinkJson(link, base, secret) });
      },
    }),
    defineRoute<SlParams, { status?: string; per_page: number; cursor?: string }>({
      method: 'get',
      path: '/api/smart-links/:sl/submissions',
      operationId: 'listSmartLinkSubmissions',
      summary: "A link's submissions, newest first",
      description: `Without \`status\`: the submissions the worker has recorded (processed, duplicate, failed). With \`status=queued\`: those accepted and not yet recorded (in the queue, or being written), however long the backlog. Pages by \`cursor\` either way (a cursor belongs to the listing it came from).`,
      tags,
      auth: true,
      params: smartLinkParams,
      query: submissionsQuery,
      responses: {
        200: {
          description: 'A page of submissions',
          body: Joi.object({
            data: Joi.array().items(submissionSchema).required(),
            meta: Joi.object({ per_page: Joi.number().integer().required(), next_cursor: Joi.string().allow(null).required() }).required(),
          }),
        },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ params, query }, req) => {
        const page = await listSubmissions(ctx, authOf(req).teamId, params.sl, query);
        return ok({ data: page.data, meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<{ sls: string }>({
      method: 'get',
      path: '/api/smart-link-submissions/:sls',
      operationId: 'getSmartLinkSubmission',
      summary: 'One submission: queued, processed, duplicate or failed',
      description: 'One submission by its id: `queued` while it waits in the queue, then `processed` (with its event), `duplicate` (of an identical one\'s event) or `failed` (with `error`: `event_limit_exceeded`, `calendar_not_found`).',
      tags,
      auth: true,
      params: Joi.object({ sls: idParam('sls_') }),
      responses: { 200: { description: 'The submission', body: dataOf(submissionSchema) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: await getSubmission(ctx, authOf(req).teamId, params.sls) }),
    }),
    // The ingest path runs beside Express (see ingest/ingest.ts); these two entries document it.
    defineRoute({
      method: 'post',
      path: '/s/:key',
      operationId: 'submitToSmartLink',
      summary: 'Create an event from a form or webhook (no token)',
      description: `Form-urlencoded, multipart (no files) or JSON, up to ${SUBMISSION_LIMIT_BYTES / 1024} KiB. Forms are UTF-8 unless the \`Content-Type\` names another \`charset\` (\`iso-8859-1\`, \`windows-1252\`, \`Shift_JIS\`…; a multipart part may name its own); an unknown charset is a 415; JSON is UTF-8. \`start\` (alias \`date_start\`) and \`end\` (alias \`date_end\`) like the API's dates; \`duration\` (minutes) wins over \`end\`, and for an all-day event counts in whole days (ceil(duration / 1440), at least one; 2880 from 3 June: 3–4 June); no end: the link's default duration (all-day: the start day); no timezone: the calendar's. Signed links need Standard Webhooks headers (\`webhook-id\`, \`webhook-timestamp\` within ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes, \`webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{raw body}">\`). A repeated \`webhook-id\` or \`Idempotency-Key\` answers with the first submission's id and queues nothing; identical content to one link resolves to one event. Rate-limited per link (\`X-RateLimit-*\`); on a signed link only requests with a valid signature count against it, and those without one are counted per client address instead (SMART_LINK_BAD_SIGNATURES_PER_MINUTE, then 429). Open to scripts on any web page (CORS: every answer carries \`Access-Control-Allow-Origin: *\`; an \`OPTIONS\` preflight is answered 204).`,
      tags,
      auth: false,
      docsOnly: true,
      consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
      params: Joi.object({ key: Joi.string().required().description("The link's key") }),
      body: submissionFields,
      responses: {
        202: { description: 'Stored in the queue', body: Joi.object({ data: Joi.object({ id: Joi.string().pattern(/^sls_/).required(), status: Joi.string().valid('queued').required() }).required() }) },
        400: { description: 'Malformed body', body: messageSchema },
        401: { description: 'Missing or invalid signature (`{"message":"Invalid signature."}`); `X-RateLimit-*` of the per-address limit on bad signatures', body: messageSchema },
        404: { description: 'Unknown or inactive link', body: messageSchema },
        413: { description: 'Body over the limit', body: messageSchema },
        415: { description: 'Unsupported content type or charset, or a file in the form', body: messageSchema },
        422: { description: 'Bad fields, every one listed; nothing queued', body: validationErrorSchema },
        429: { description: "The link's rate limit, or too many bad signatures from this address (`Retry-After`)", body: messageSchema },
        503: { description: 'The queue cannot take it now (`Retry-After`); nothing was accepted', body: messageSchema },
      },
      handler: async () => undefined,
    }),
    defineRoute({
      method: 'post',
      path: '/s/:key/:platform',
      operationId: 'submitToSmartLinkAndAdd',
      summary: 'The same, then 303 to the new event on a calendar platform',
      description: 'For forms that want the visitor to land in their calendar: once the event exists (up to 10 s) the answer is a 303 to `/e/{uid}/{platform}`; otherwise (slow queue, approval needed) the 202 of the plain form.',
      tags,
      auth: false,
      docsOnly: true,
      consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
      params: Joi.object({
        key: Joi.string().required(),
        platform: Joi.string().valid('google', 'outlook_web', 'office365', 'yahoo', 'ics', 'apple', 'outlook').required(),
      }),
      body: submissionFields,
      responses: {
        303: { description: "To the event's platform link" },
        202: { description: 'Accepted; the event is not ready (or needs approval)', body: Joi.object({ data: Joi.object().unknown(true).required() }) },
        ...errors(400, 401, 404, 413, 415, 422, 429, 503),
      },
      handler: async () => undefined,
    }),
  ];
}
