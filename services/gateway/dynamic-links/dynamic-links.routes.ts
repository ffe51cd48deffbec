import type { Request, Response } from 'express';
import { idParam } from '../http/validation';
import Joi from 'joi';
import { PLATFORMS } from '../../../shared/calendar/platforms';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors, messageSchema, validationErrorSchema } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { deliver } from '../public/deliver';
import { eventCard } from '../public/public.service';
import { eventPage, pageCsp } from '../public/views';
import { missing } from '../public/page-response';
import { likelyPlatform } from '../public/add-to-calendar';
import { PAGE_VARY, pageLocale } from '../public/i18n';
import {
  ADDEVENT_SERVICES,
  createDynamicLinkBody,
  dynAddEventQuery,
  type DynamicEventInput,
  dynamicLinkSchema,
  dynQuery,
  type DynService,
} from './dynamic-links.schemas';
import { fromAddEventDate, type AddEventDateFormat } from './addevent-dates';
import { createDynamicLink, deleteDynamicLink, dynamicEventView, listDynamicLinks, requireDynamicLink, resolveKey, toDynamicLinkJson } from './dynamic-links.service';
import { validationFailed } from '../../../shared/errors/app-error';

const CSP = pageCsp();

export function dynamicLinkRoutes(ctx: AppContext): RouteSpec[] {
  const base = ctx.config.publicBaseUrl;
  const uidHost = new URL(base).host;
  const json = (row: Parameters<typeof toDynamicLinkJson>[0]) => toDynamicLinkJson(row, base);
  const tags = ['Dynamic links'];
  const dkParams = Joi.object({ dk: idParam('dk_') });

  /** Serves a dynamic event: its page, or straight to a platform when `service` is given. */
  async function serve(req: Request, res: Response, input: DynamicEventInput): Promise<void> {
    const key = await resolveKey(ctx, input.key);
    if (!key) throw missing('Dynamic link');
    // The page's own address: the query as sent, without the service choice.
    const query = new URLSearchParams(req.url.split('?')[1] ?? '');
    query.delete('service');
    const pageUrl = `${base}${req.path}?${query.toString()}`;
    const view = dynamicEventView(input, pageUrl, ctx.clock.now().getTime());
    ctx.counters.dynamicLinkUses.add(key.id);
    if (input.service) {
      deliver(res, input.service, view, { uidHost, personal: false, locale: pageLocale(req) });
      return;
    }
    const links = Object.fromEntries(PLATFORMS.map((p) => [p.key, `${pageUrl}&service=${p.key}`]));
    res
      .status(200)
      .set('Content-Security-Policy', CSP)
      .set('Cache-Control', 'public, max-age=300')
      // Its content is whatever the link's query says: not for search engines (robots.txt too).
      .set('X-Robots-Tag', 'noindex, nofollow')
      // The visitor's likely platform comes first in the page's control.
      .set('Vary', PAGE_VARY)
      .type('html')
      .send(eventPage(eventCard(view, links), { first: likelyPlatform(req.headers['user-agent']), locale: pageLocale(req) }));
  }

  const dynResponses = {
    200: { description: 'The add-to-calendar page (HTML), or the .ics file with service=ics|apple|outlook', contentType: ['text/html', 'text/calendar'] },
    302: { description: 'To the platform (service=google|outlook_web|office365|yahoo)' },
    404: { description: 'Unknown or deleted key', contentType: 'text/html', body: messageSchema },
    422: { description: 'A bad value: a page listing each problem (JSON with Accept: application/json)', contentType: 'text/html', body: validationErrorSchema },
  };

  return [
    defineRoute<Record<string, never>, Record<string, never>, { name?: string | null }>({
      method: 'post',
      path: '/api/dynamic-links',
      operationId: 'createDynamicLink',
      summary: 'Create a dynamic-link key',
      description: 'A key lets /api/dyn (and the AddEvent-compatible /api/dyn_ade) render add-to-calendar pages and links for events that are not stored.',
      tags,
      auth: true,
      body: createDynamicLinkBody,
      responses: { 200: { description: 'The key', body: dataOf(dynamicLinkSchema) }, ...errors(400, 401, 415, 422, 503) },
      handler: async ({ body }, req) => ok({ data: json(await createDynamicLink(ctx, authOf(req).teamId, body.name ?? null)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/dynamic-links',
      operationId: 'listDynamicLinks',
      summary: "The team's dynamic-link keys, with their use counts",
      description: 'Every dynamic-link key of the team, each with how many times its links were used.',
      tags,
      auth: true,
      responses: { 200: { description: 'The keys', body: dataListOf(dynamicLinkSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => ok({ data: (await listDynamicLinks(ctx, authOf(req).teamId)).map(json) }),
    }),
    defineRoute<{ dk: string }>({
      method: 'get',
      path: '/api/dynamic-links/:dk',
      operationId: 'getDynamicLink',
      summary: 'A dynamic-link key',
      description: 'One dynamic-link key with its use count; another team\'s key is a 404.',
      tags,
      auth: true,
      params: dkParams,
      responses: { 200: { description: 'The key', body: dataOf(dynamicLinkSchema) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: json(await requireDynamicLink(ctx, authOf(req).teamId, params.dk)) }),
    }),
    defineRoute<{ dk: string }>({
      method: 'delete',
      path: '/api/dynamic-links/:dk',
      operationId: 'deleteDynamicLink',
      summary: 'Delete a dynamic-link key (its links stop working)',
      description: 'Deletes the key: links made with it answer 404 from then on.',
      tags,
      auth: true,
      params: dkParams,
      responses: {
        200: { description: 'Deleted', body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) },
        ...errors(401, 404, 503),
      },
      handler: async ({ params }, req) => {
        const row = await deleteDynamicLink(ctx, authOf(req).teamId, params.dk);
        return ok({ data: { id: `dk_${row.uid}`, deleted: true } });
      },
    }),
    defineRoute<Record<string, never>, Record<string, string | number | boolean | undefined>>({
      method: 'get',
      path: '/api/dyn',
      operationId: 'dynamicEvent',
      summary: 'Add-to-calendar page (or platform link) for an event described in the query',
      description: 'No token: the `uid` (a dk_ key) identifies the team. Without `service`, the page with a button per platform; with it, straight to that platform.',
      tags,
      auth: false,
      page: true,
      query: dynQuery,
      responses: dynResponses,
      handler: async ({ query }, req, res) =>
        serve(req, res, {
          key: query.uid as string,
          title: query.title as string,
          start: query.start as string,
          end: query.end as string | undefined,
          duration: query.duration as number | undefined,
          allDay: query.all_day as boolean | undefined,
          timezone: query.timezone as string,
          description: query.description as string | undefined,
          location: query.location as string | undefined,
          recurring: query.recurring as string | undefined,
          alarm: query.alarm as number | undefined,
          service: query.service as DynService | undefined,
        }),
    }),
    defineRoute<Record<string, never>, Record<string, string | number | boolean | undefined>>({
      method: 'get',
      path: '/api/dyn_ade',
      operationId: 'dynamicEventAddEvent',
      summary: "The same, with AddEvent's parameter names",
      description:
        '`client` (the dk_ key), `title`, `start`/`end` like `05/08/2026 09:00 AM` (`date_format` MM/DD/YYYY or DD/MM/YYYY), `timezone`, `description`, `location`, `all_day_event`, `alarm_reminder`, `recurring`, `service` (google, outlook, outlookcom, office365, yahoo, apple, stream).',
      tags,
      auth: false,
      page: true,
      query: dynAddEventQuery,
      responses: dynResponses,
      handler: async ({ query }, req, res) => {
        const format = query.date_format as AddEventDateFormat;
        const start = fromAddEventDate(String(query.start), format);
        const end = query.end === undefined ? undefined : fromAddEventDate(String(query.end), format);
        const problems: Record<string, string[]> = {};
        if (!start) problems.start = ['The start field must be a valid date.'];
        if (end === null) problems.end = ['The end field must be a valid date.'];
        if (Object.keys(problems).length) throw validationFailed(problems);
        const service = query.service === undefined ? undefined : (ADDEVENT_SERVICES[String(query.service)] ?? (query.service as DynService));
        return serve(req, res, {
          key: query.client as string,
          title: query.title as string,
          start: start as string,
          end: end ?? undefined,
          allDay: query.all_day_event as boolean | undefined,
          timezone: query.timezone as string,
          description: query.description as string | undefined,
          location: query.location as string | undefined,
          recurring: query.recurring as string | undefined,
          alarm: query.alarm_reminder as number | undefined,
          service,
        });
      },
    }),
  ];
}
