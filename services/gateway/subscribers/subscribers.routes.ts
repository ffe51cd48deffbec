import { calendarPublicUrl } from '../../../shared/events/event-json';
import type { Request, Response } from 'express';
import { isbot } from 'isbot';
import Joi from 'joi';
import { httpError, notFound, validationFailed } from '../../../shared/errors/app-error';
import { findCalendar } from '../public/public.service';
import type { AppContext } from '../context';
import { visitorOf } from '../http/visitor';
import { authOf } from '../http/auth';
import { formOrJsonBody } from '../http/body';
import { limitAddress } from '../http/client-address';
import { consumePoint, rateLimitHeaders, sharedLimiter } from '../http/rate-limits';
import { dataOf, errors, messageSchema, validationErrorSchema } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam, uidParam, validatePart } from '../http/validation';
import { calendarFeed, sendFeed } from '../public/calendar-feed';
import { missing } from '../public/page-response';
import { pageCsp, formProblems, subscribeDetailsPage } from '../public/views';
import { pageLocale } from '../public/i18n';
import {
  listSubscribersQuery,
  SUBSCRIBE_PLATFORMS,
  subscriberDetailsBody,
  subscriberDetailsTypes,
  subscriberParams,
  subscriberSchema,
  type SubscribePlatform,
  updateSubscriberBody,
} from './subscribers.schemas';
import {
  countSync,
  deleteSubscriber,
  listSubscribers,
  platformSubscribeUrl,
  subscribe,
  subscriberByToken,
  toSubscriberJson,
  updateSubscriber,
} from './subscribers.service';

const CSP = pageCsp();
const SUBSCRIBE_WINDOW_SECONDS = 10 * 60;

/** What the form shows again after a refusal: only the strings that were sent. */
function typedDetails(body: unknown): { name?: string; email?: string } {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { name: text(b.name), email: text(b.email) };
}

export function subscriberRoutes(ctx: AppContext): RouteSpec[] {
  const base = ctx.config.publicBaseUrl;
  const tags = ['Subscribers'];
  const publicTags = ['Public pages'];
  const detailsBody = formOrJsonBody('4kb');
  const subscribeParams = Joi.object({ uid: uidParam('calendar'), platform: Joi.string().valid(...SUBSCRIBE_PLATFORMS).required() });

  // Subscribers one address may record in ten minutes, across calendars: each is a row, and
  // link prefetchers or a script would otherwise add one per request.
  const SUBSCRIBE_RECORDS = ctx.config.subscribeRatePer10Minutes;
  const recordLimiter = sharedLimiter(ctx.redis, { keyPrefix: `${ctx.config.queuePrefix}:rl:subscribe`, points: SUBSCRIBE_RECORDS, durationSeconds: SUBSCRIBE_WINDOW_SECONDS });

  /**
   * Counts a subscriber about to be recorded against the request's address (X-RateLimit-*
   * either way). Past the limit the visitor is not refused: a person still gets the calendar,
   * through its public feed, and only the row (and so the personal feed) is left out.
   */
  async function mayRecord(req: Request, res: Response): Promise<boolean> {
    const { state, over } = await consumePoint(recordLimiter, limitAddress(req.ip));
    rateLimitHeaders(res, SUBSCRIBE_RECORDS, state, false); // not refused: no Retry-After
    return !over;
  }

  /** The platform's subscribe address for the calendar's public feed (nothing recorded). */
  const publicFeedRedirect = (platform: SubscribePlatform, calendar: { uid: string; name: string }) =>
    platformSubscribeUrl(platform, `${calendarPublicUrl(base, calendar.uid)}.ics`, calendar.name);

  async function calendarFor(uid: string, platform: string) {
    const calendar = (SUBSCRIBE_PLATFORMS as readonly string[]).includes(platform) ? await findCalendar(ctx, uid) : undefined;
    if (!calendar) throw missing('Calendar');
    return calendar;
  }

  return [
    defineRoute<{ cal: string }, { status?: string; platform?: string; per_page: number; cursor?: string }>({
      method: 'get',
      path: '/api/calendars/:cal/subscribers',
      operationId: 'listSubscribers',
      summary: "The calendar's subscribers, oldest first",
      description: 'The calendar\'s subscribers, oldest first: platform, name and email when the subscribe form asked for them, `status`, how often and when their feed was last fetched. Filters: `status`, `platform`; a page at a time.',
      tags,
      auth: true,
      params: Joi.object({ cal: idParam('cal_') }),
      query: listSubscribersQuery,
      responses: {
        200: {
          description: 'A page of subscribers',
          body: Joi.object({
            data: Joi.array().items(subscriberSchema).required(),
            meta: Joi.object({ per_page: Joi.number().integer().required(), next_cursor: Joi.string().allow(null).required() }).required(),
          }),
        },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ params, query }, req) => {
        const page = await listSubscribers(ctx, authOf(req).teamId, params.cal, query);
        return ok({ data: page.rows.map((r) => toSubscriberJson(r, page.calendar.uid, base)), meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<{ cal: string; sub: string }, Record<string, never>, { status: 'active' | 'blocked' }>({
      method: 'put',
      path: '/api/calendars/:cal/subscribers/:sub',
      operationId: 'updateSubscriber',
      summary: 'Block or unblock a subscriber (a blocked personal feed answers 410)',
      description: '`{"status":"blocked"}` stops the subscriber\'s personal feed (it answers 410, which calendar apps take as stop polling); `{"status":"active"}` serves it again.',
      tags,
      auth: true,
      params: subscriberParams,
      body: updateSubscriberBody,
      responses: { 200: { description: 'The subscriber', body: dataOf(subscriberSchema) }, ...errors(400, 401, 404, 415, 422, 503) },
      handler: async ({ params, body }, req) => {
        const { calendar, row } = await updateSubscriber(ctx, authOf(req).teamId, params.cal, params.sub, body.status);
        return ok({ data: toSubscriberJson(row, calendar.uid, base) });
      },
    }),
    defineRoute<{ cal: string; sub: string }>({
      method: 'delete',
      path: '/api/calendars/:cal/subscribers/:sub',
      operationId: 'deleteSubscriber',
      summary: 'Remove a subscriber (its personal feed is gone)',
      description: 'Removes the subscriber: its personal feed answers 404 from then on.',
      tags,
      auth: true,
      params: subscriberParams,
      responses: {
        200: { description: 'Removed', body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) },
        ...errors(401, 404, 503),
      },
      handler: async ({ params }, req) => {
        const row = await deleteSubscriber(ctx, authOf(req).teamId, params.cal, params.sub);
        return ok({ data: { id: `sub_${row.uid}`, deleted: true } });
      },
    }),
    defineRoute<{ uid: string; platform: SubscribePlatform }>({
      method: 'get',
      path: '/c/:uid/subscribe/:platform',
      operationId: 'subscribeToCalendar',
      summary: 'The subscribe page: a button (and, for calendars that ask, name and email) that subscribes with a POST',
      description:
        'Records nothing: opening the address (as link previews and mail scanners do) only shows the page, whose button POSTs to the same address. Bots are sent to the platform with the public feed.',
      tags: publicTags,
      auth: false,
      page: true,
      params: subscribeParams,
      responses: {
        200: { description: 'The subscribe page', contentType: 'text/html' },
        302: { description: "Bots: to the platform's subscribe page for the public feed" },
        404: { description: 'Unknown calendar or platform', contentType: 'text/html', body: messageSchema },
      },
      handler: async ({ params }, req, res) => {
        const calendar = await calendarFor(params.uid, params.platform);
        res.set('Cache-Control', 'no-store');
        if (isbot(req.headers['user-agent'] ?? '')) {
          res.redirect(302, publicFeedRedirect(params.platform, calendar));
          return;
        }
        res
          .status(200)
          .set('Content-Security-Policy', CSP)
          .type('html')
          .send(subscribeDetailsPage(pageLocale(req, calendar.locale), calendar.name, req.originalUrl.split('?')[0], {}, {}, calendar.ask_subscriber_details));
      },
    }),
    defineRoute<{ uid: string; platform: SubscribePlatform }, Record<string, never>, { name?: string; email?: string }>({
      method: 'post',
      path: '/c/:uid/subscribe/:platform',
      operationId: 'subscribeToCalendarWithDetails',
      summary: 'Subscribe: records a subscriber with a personal feed, then 303 to the platform',
      description: `Google gets \`cid=\`, Outlook.com and Office 365 \`addfromweb\`, Apple a \`webcal://\` address, \`ics\` the feed itself. Calendars with \`ask_subscriber_details\` need \`name\` and \`email\` (form or JSON). Each address may record SUBSCRIBE_RATE_PER_10_MINUTES subscribers in ${SUBSCRIBE_WINDOW_SECONDS / 60} minutes (\`X-RateLimit-*\`); beyond that it is sent to the platform with the calendar's public feed, not recorded.`,
      tags: publicTags,
      auth: false,
      page: true,
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      params: subscribeParams,
      // Types only here; the rules are checked below, so that the form comes back with them.
      body: subscriberDetailsTypes,
      before: detailsBody,
      responses: {
        303: { description: "To the platform's subscribe page for the personal feed (for the public feed past the address's limit)" },
        404: { description: 'Unknown calendar or platform', contentType: 'text/html', body: messageSchema },
        415: { description: 'A body that is neither form-urlencoded nor JSON', contentType: 'text/html', body: messageSchema },
        422: { description: 'Missing or invalid name or email (the form again; JSON when asked)', contentType: 'text/html', body: validationErrorSchema },
      },
      handler: async ({ params }, req, res) => {
        const calendar = await calendarFor(params.uid, params.platform);
        const { value, errors: fieldErrors } = calendar.ask_subscriber_details
          ? validatePart<{ name?: string; email?: string }>(subscriberDetailsBody, req.body ?? {})
          : { value: {}, errors: {} };
        if (Object.keys(fieldErrors).length) {
          const locale = pageLocale(req, calendar.locale);
          throw validationFailed(fieldErrors).withPage(subscribeDetailsPage(locale, calendar.name, req.originalUrl.split('?')[0], formProblems(locale, fieldErrors), typedDetails(req.body)));
        }
        res.set('Cache-Control', 'no-store');
        if (!(await mayRecord(req, res))) {
          res.redirect(303, publicFeedRedirect(params.platform, calendar));
          return;
        }
        const details = calendar.ask_subscriber_details ? { name: value.name, email: value.email } : {};
        res.redirect(303, (await subscribe(ctx, calendar, params.platform, details)).redirect);
      },
    }),
    defineRoute<{ uid: string; token: string }>({
      method: 'get',
      path: '/c/:uid/feeds/:token.ics',
      operationId: 'personalCalendarFeed',
      summary: "A subscriber's personal feed: the calendar's feed, counted per fetch",
      description: 'Conditional requests answer 304. A blocked subscriber gets 410.',
      tags: publicTags,
      auth: false,
      page: false,
      params: Joi.object({ uid: uidParam('calendar'), token: Joi.string().required().description('The personal feed token') }),
      responses: {
        200: { description: 'The feed', contentType: 'text/calendar' },
        304: { description: 'Not modified' },
        404: { description: 'Unknown subscriber', body: messageSchema },
        410: { description: 'The subscriber is blocked', body: messageSchema },
      },
      handler: async ({ params }, req, res) => {
        const subscriber = await subscriberByToken(ctx, params.token);
        let feed = subscriber ? ctx.caches.feeds.get(params.uid) : undefined;
        const calendar = subscriber && !feed ? await findCalendar(ctx, params.uid) : undefined;
        if (!subscriber || (!feed && (!calendar || calendar.id !== subscriber.calendar_id)) || (feed && feed.calendarId !== subscriber.calendar_id)) {
          throw notFound('Feed');
        }
        if (subscriber.status === 'blocked') throw httpError(410, 'This subscription was blocked by the calendar owner.');
        feed ??= await calendarFeed(ctx, calendar as NonNullable<typeof calendar>);
        countSync(ctx, subscriber);
        ctx.analytics.count(visitorOf(req), { teamId: subscriber.team_id, calendarId: subscriber.calendar_id }, 'feed_fetch', subscriber.platform);
        await sendFeed(req, res, feed, 'private, max-age=300');
      },
    }),
  ];
}
