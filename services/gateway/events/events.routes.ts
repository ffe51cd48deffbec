import { type EventWithCalendar } from '../../../shared/events/event-rows';
import { toEventJson } from '../../../shared/events/event-json';
import { eventStats } from '../analytics/analytics';
import { parseDateInput } from '../../../shared/calendar/dates';
import { resolveEventTimes } from '../calendar/event-times';
import { isValidTimeZone } from '../../../shared/calendar/time-zones';
import { AppError, type FieldErrors } from '../../../shared/errors/app-error';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import Joi from 'joi';
import { calendarParams } from '../calendars/calendars.schemas';
import { errors, mailQuota429, validationErrorSchema } from '../http/responses';
import { signedEventUrl } from '../../../shared/links/signatures';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { toSingleEventJson } from './events.presenter';
import {
  calendarEventParams,
  createEventBody,
  deleteEventBody,
  deleteEventQuery,
  deletedEventSchema,
  eventLimitSchema,
  eventListSchema,
  eventParams,
  eventSchema,
  listEventsQuery,
  simpleEventBody,
  singleEventSchema,
  updateEventBody,
  withHtmlQuery,
  eventReadQuery,
  type DeleteEventFlags,
  type EventInput,
  type ListEventsQuery,
  type SimpleEventInput,
} from './events.schemas';
import { createEvent, createSimpleEvent, deleteEvent, listEvents, readEvent, requireEvent, setEventStatus, updateEvent } from './events.service';

type CalParams = { cal: string };
type CalEvtParams = { cal: string; evt: string };
type EvtParams = { evt: string };
type WithHtml = { with_html?: boolean };
type EventRead = WithHtml & { with_stats?: boolean };

/**
 * date_end on or after date_start, checked with the other fields so one 422 lists every
 * problem. Skipped when the parts it needs already failed (their own errors say why).
 */
function datesInOrder(body: { date_start?: unknown; date_end?: unknown; timezone?: unknown; is_all_day?: unknown }, fields?: { startField: string; endField: string }): FieldErrors {
  const { date_start: start, date_end: end, timezone } = body;
  if (typeof start !== 'string' || typeof end !== 'string' || !isValidTimeZone(timezone)) return {};
  if (!parseDateInput(start) || !parseDateInput(end)) return {};
  const result = resolveEventTimes({ isAllDay: body.is_all_day === true, start, end, timezone, ...fields });
  return 'errors' in result ? result.errors : {};
}

/** notify_invitees may come in the query or the body (docs/email.md); both must agree. */
function notifyFlagsAgree({ query, body }: { query: DeleteEventFlags; body: DeleteEventFlags }): FieldErrors {
  const inQuery = query.notify_invitees;
  const inBody = body.notify_invitees;
  if (typeof inQuery !== 'boolean' || typeof inBody !== 'boolean' || inQuery === inBody) return {};
  return { notify_invitees: ['The notify invitees field must have the same value in the query and the body.'] };
}

const notifyInvitees = (query: DeleteEventFlags, body: DeleteEventFlags) => query.notify_invitees ?? body.notify_invitees ?? false;

/** A signed URL asked for an event without an access code: the one 422 answered as `{"error"}`. */
function noAccessCode(): AppError {
  const err = new AppError('validation_failed', 422, 'The event has no access code: set access_code to protect it, then ask for signed URLs.');
  err.messageKey = 'error';
  return err;
}

export function eventRoutes(deps: AppContext): RouteSpec[] {
  const { config, db, clock } = deps;
  const base = config.publicBaseUrl;
  const single = (found: EventWithCalendar, withHtml?: boolean) => ok(toSingleEventJson(found, base, withHtml === true));
  /** A read: with `stats` when asked. */
  const read = async (found: EventWithCalendar, query: EventRead) => {
    const body = toSingleEventJson(found, base, query.with_html === true);
    return ok(query.with_stats ? { ...body, stats: await eventStats(deps.db, found.event.team_id, found.event.id) } : body);
  };
  const tags = ['Events'];
  const single200 = { description: 'The event with its links and HTML variants', body: singleEventSchema };
  const limit409 = { description: "The team's monthly event limit is reached", body: eventLimitSchema };
  const deleteDescription =
    '`notify_invitees` (query or body; when both are sent they must agree) `true` emails every invitee, and everyone whose RSVP is yes or maybe, a cancellation; `invitees_notified` says how many were queued.';
  const listDescription =
    'Ordered by date_start, then id. Pages by keyset: pass `meta.next_cursor` as `cursor` for the next page. Boolean flags take true, false, 1 or 0.';

  return [
    defineRoute<Record<string, never>, ListEventsQuery>({
      method: 'get',
      path: '/api/events',
      operationId: 'listEvents',
      summary: "List the team's events",
      description: listDescription,
      tags,
      auth: true,
      query: listEventsQuery,
      responses: { 200: { description: 'A page of events', body: eventListSchema }, ...errors(401, 422, 503) },
      handler: async ({ query }, req) => {
        const page = await listEvents(deps, authOf(req).teamId, query);
        return ok({ data: page.rows.map((r) => toEventJson(r, base)), meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<Record<string, never>, WithHtml, SimpleEventInput>({
      method: 'post',
      path: '/api/events',
      operationId: 'createSimpleEvent',
      summary: 'Create an event from a title and a start',
      description:
        'No end: one hour (all-day: the same day). No timezone: the calendar\'s. No calendar: the team\'s oldest, or a new "My Calendar". A bare-date start makes an all-day event.',
      tags,
      auth: true,
      query: withHtmlQuery,
      body: simpleEventBody,
      check: ({ body }) =>
        body.end === undefined || body.timezone === undefined
          ? {}
          : datesInOrder({ ...body, date_start: body.start, date_end: body.end, is_all_day: body.is_all_day ?? !/[T ]/.test(String(body.start)) }, { startField: 'start', endField: 'end' }),
      responses: { 200: single200, 409: limit409, ...errors(400, 401, 413, 415, 422, 503) },
      handler: async ({ body, query }, req) => single(await createSimpleEvent(deps, authOf(req).teamId, body), query.with_html),
    }),
    defineRoute<EvtParams, EventRead>({
      method: 'get',
      path: '/api/events/:evt',
      operationId: 'getEvent',
      summary: 'Get an event by its public id',
      description: 'One event of the team, with its platform links and snippets; `with_html=true` adds ready-to-paste markup, `with_stats=true` its figures (views, adds by platform, RSVPs).',
      tags,
      auth: true,
      params: eventParams,
      query: eventReadQuery,
      responses: { 200: single200, ...errors(401, 404, 503) },
      handler: async ({ params, query }, req) => read(await readEvent(deps, authOf(req).teamId, params.evt), query),
    }),
    defineRoute<EvtParams, DeleteEventFlags, DeleteEventFlags>({
      method: 'delete',
      path: '/api/events/:evt',
      operationId: 'deleteEventShort',
      summary: 'Delete an event (short form)',
      description: deleteDescription,
      tags,
      auth: true,
      params: eventParams,
      query: deleteEventQuery,
      body: deleteEventBody,
      check: notifyFlagsAgree,
      responses: { 200: { description: 'Deleted', body: deletedEventSchema }, ...errors(400, 401, 404, 422, 503), 429: mailQuota429 },
      handler: async ({ params, query, body }, req) => {
        const result = await deleteEvent(deps, authOf(req).teamId, params.evt, { notifyInvitees: notifyInvitees(query, body), requestId: req.id });
        return ok({ data: { public_id: result.publicId, deleted: true, invitees_notified: result.inviteesNotified } });
      },
    }),
    ...(['approve', 'reject'] as const).map((action) =>
      defineRoute<EvtParams>({
        method: 'post',
        path: `/api/events/:evt/${action}`,
        operationId: `${action}Event`,
        summary: action === 'approve' ? 'Approve a pending event (it becomes public)' : 'Reject an event (it leaves every public page and feed)',
        description:
          action === 'approve'
            ? 'Publishes an event from a smart link that requires approval (or one rejected earlier): it appears on its page, its calendar\'s page and feeds. Answers the event.'
            : 'Withdraws an event: it leaves every public page and feed (its page answers 404) until it is approved. Answers the event.',
        tags,
        auth: true,
        params: eventParams,
        responses: { 200: { description: 'The event', body: Joi.object({ data: eventSchema.required() }) }, ...errors(401, 404, 503) },
        handler: async ({ params }, req) => {
          const found = await setEventStatus(deps, authOf(req).teamId, params.evt, action === 'approve' ? 'approved' : 'rejected');
          return ok({ data: toEventJson(found, base) });
        },
      }),
    ),
    defineRoute<CalParams, ListEventsQuery>({
      method: 'get',
      path: '/api/calendars/:cal/events',
      operationId: 'listCalendarEvents',
      summary: 'List the events of a calendar',
      description: listDescription,
      tags,
      auth: true,
      params: calendarParams,
      query: listEventsQuery,
      responses: { 200: { description: 'A page of events', body: eventListSchema }, ...errors(401, 404, 422, 503) },
      handler: async ({ params, query }, req) => {
        const page = await listEvents(deps, authOf(req).teamId, query, params.cal);
        return ok({ data: page.rows.map((r) => toEventJson(r, base)), meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<CalParams, WithHtml, EventInput>({
      method: 'post',
      path: '/api/calendars/:cal/events',
      operationId: 'createEvent',
      summary: 'Create an event',
      description: 'Without an offset, date_start and date_end are wall time in `timezone`. For all-day events date_end is the inclusive last day.',
      tags,
      auth: true,
      params: calendarParams,
      query: withHtmlQuery,
      body: createEventBody,
      check: ({ body }) => datesInOrder(body),
      responses: { 200: single200, 409: limit409, ...errors(400, 401, 404, 413, 415, 422, 503) },
      handler: async ({ params, body, query }, req) => single(await createEvent(deps, authOf(req).teamId, params.cal, body), query.with_html),
    }),
    defineRoute<CalEvtParams, EventRead>({
      method: 'get',
      path: '/api/calendars/:cal/events/:evt',
      operationId: 'getCalendarEvent',
      summary: 'Get an event',
      description: 'One event of the calendar, with its platform links and snippets; `with_html=true` adds ready-to-paste markup, `with_stats=true` its figures (views, adds by platform, RSVPs).',
      tags,
      auth: true,
      params: calendarEventParams,
      query: eventReadQuery,
      responses: { 200: single200, ...errors(401, 404, 503) },
      handler: async ({ params, query }, req) => read(await readEvent(deps, authOf(req).teamId, params.evt, params.cal), query),
    }),
    defineRoute<CalEvtParams, WithHtml, EventInput>({
      method: 'put',
      path: '/api/calendars/:cal/events/:evt',
      operationId: 'updateEvent',
      summary: 'Update an event',
      description:
        'title, date_start, date_end and timezone are required; an omitted optional field keeps its value, an explicit null clears it. `send_invite_updates: true` emails every invitee, and everyone whose RSVP is yes or maybe, an update.',
      tags,
      auth: true,
      params: calendarEventParams,
      query: withHtmlQuery,
      body: updateEventBody,
      check: ({ body }) => (body.is_all_day === undefined ? {} : datesInOrder(body)),
      responses: { 200: single200, ...errors(400, 401, 404, 413, 415, 422, 503), 429: mailQuota429 },
      handler: async ({ params, body, query }, req) =>
        single(await updateEvent(deps, authOf(req).teamId, params.cal, params.evt, body, { requestId: req.id }), query.with_html),
    }),
    defineRoute<CalEvtParams, Record<string, never>, { expiry_days: number }>({
      method: 'post',
      path: '/api/calendars/:cal/events/:evt/signed-url',
      operationId: 'signedEventUrl',
      summary: 'A time-limited signed URL for a protected event',
      description:
        'The URL is the event page with `expires` (unix seconds) and `signature` (HMAC-SHA256 with APP_KEY). One signed pair opens the page and every platform link of the event until it expires or the event\'s access code changes.',
      tags,
      auth: true,
      params: calendarEventParams,
      body: Joi.object({ expiry_days: Joi.number().integer().min(1).max(365).default(30).description('Days until it expires (1–365, default 30)') }).unknown(true),
      responses: {
        200: { description: 'The signed URL', body: Joi.object({ url: Joi.string().uri().required() }) },
        422: {
          description: 'The event has no access code (`{"error": …}`, the one answer in that shape), or expiry_days is out of range',
          body: Joi.alternatives().try(Joi.object({ error: Joi.string().required() }), validationErrorSchema),
        },
        ...errors(400, 401, 404, 415, 503),
      },
      handler: async ({ params, body }, req) => {
        const { event } = await requireEvent(db, authOf(req).teamId, params.evt, { calPublicId: params.cal });
        if (!event.access_code_hash) throw noAccessCode();
        const expires = Math.floor(clock.now().getTime() / 1000) + body.expiry_days * 86_400;
        // Bound to the code as it is now: a new code revokes the URL.
        return ok({ url: signedEventUrl(config.appKey, config.publicBaseUrl, { uid: event.uid, access_code_hash: event.access_code_hash }, expires) });
      },
    }),
    defineRoute<CalEvtParams, DeleteEventFlags, DeleteEventFlags>({
      method: 'delete',
      path: '/api/calendars/:cal/events/:evt',
      operationId: 'deleteEvent',
      summary: 'Delete an event',
      description: deleteDescription,
      tags,
      auth: true,
      params: calendarEventParams,
      query: deleteEventQuery,
      body: deleteEventBody,
      check: notifyFlagsAgree,
      responses: { 200: { description: 'Deleted', body: deletedEventSchema }, ...errors(400, 401, 404, 422, 503), 429: mailQuota429 },
      handler: async ({ params, query, body }, req) => {
        const result = await deleteEvent(deps, authOf(req).teamId, params.evt, {
          calPublicId: params.cal,
          notifyInvitees: notifyInvitees(query, body),
          requestId: req.id,
        });
        return ok({ data: { public_id: result.publicId, deleted: true, invitees_notified: result.inviteesNotified } });
      },
    }),
  ];
}
