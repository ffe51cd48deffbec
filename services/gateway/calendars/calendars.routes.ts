import { toCalendarJson } from '../../../shared/events/event-json';
import Joi from 'joi';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { calendarParams, calendarSchema, createCalendarBody, updateCalendarBody, type CalendarInput } from './calendars.schemas';
import { createCalendar, deleteCalendar, requireCalendar, teamCalendars, updateCalendar } from './calendars.service';

type CalParams = { cal: string };

export function calendarRoutes(ctx: AppContext): RouteSpec[] {
  const { db, config } = ctx;
  const json = (row: Parameters<typeof toCalendarJson>[0]) => toCalendarJson(row, config.publicBaseUrl);
  const tags = ['Calendars'];
  return [
    defineRoute({
      method: 'get',
      path: '/api/calendars',
      operationId: 'listCalendars',
      summary: "List the team's calendars",
      description: 'Every calendar of the team, oldest first.',
      tags,
      auth: true,
      responses: { 200: { description: 'The calendars, oldest first', body: dataListOf(calendarSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => ok({ data: (await teamCalendars(ctx, authOf(req).teamId)).map(json) }),
    }),
    defineRoute<Record<string, never>, Record<string, never>, CalendarInput>({
      method: 'post',
      path: '/api/calendars',
      operationId: 'createCalendar',
      summary: 'Create a calendar',
      description: '`name` and `timezone` (IANA) are required; `internal_name`, `description`, `week_begins` (0 Sunday to 6) and `short_link` are optional. A short link already taken is a 422.',
      tags,
      auth: true,
      body: createCalendarBody,
      responses: { 200: { description: 'The new calendar', body: dataOf(calendarSchema) }, ...errors(400, 401, 413, 415, 422, 503) },
      handler: async ({ body }, req) => ok({ data: json(await createCalendar(db, authOf(req).teamId, body)) }),
    }),
    defineRoute<CalParams>({
      method: 'get',
      path: '/api/calendars/:cal',
      operationId: 'getCalendar',
      summary: 'Get a calendar',
      description: 'One calendar of the team; another team\'s calendar is a 404, as an unknown one.',
      tags,
      auth: true,
      params: calendarParams,
      responses: { 200: { description: 'The calendar', body: dataOf(calendarSchema) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: json(await requireCalendar(db, authOf(req).teamId, params.cal)) }),
    }),
    defineRoute<CalParams, Record<string, never>, CalendarInput>({
      method: 'put',
      path: '/api/calendars/:cal',
      operationId: 'updateCalendar',
      summary: 'Update a calendar',
      description: '`name` and `timezone` are required; an omitted optional field keeps its value, an explicit null clears it.',
      tags,
      auth: true,
      params: calendarParams,
      body: updateCalendarBody,
      responses: { 200: { description: 'The updated calendar', body: dataOf(calendarSchema) }, ...errors(400, 401, 404, 413, 415, 422, 503) },
      handler: async ({ params, body }, req) => ok({ data: json(await updateCalendar(ctx, authOf(req).teamId, params.cal, body)) }),
    }),
    defineRoute<CalParams>({
      method: 'delete',
      path: '/api/calendars/:cal',
      operationId: 'deleteCalendar',
      summary: 'Delete a calendar that has no events',
      description: 'Deletes the calendar when it has no events; one with events is a 409 (delete or move its events first). Its short link is retired (it keeps leading nowhere else).',
      tags,
      auth: true,
      params: calendarParams,
      responses: {
        200: {
          description: 'Deleted',
          body: Joi.object({ data: Joi.object({ public_id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() }).required() }),
        },
        ...errors(401, 404, 409, 503),
      },
      handler: async ({ params }, req) => {
        const row = await deleteCalendar(ctx, authOf(req).teamId, params.cal);
        return ok({ data: { public_id: `cal_${row.uid}`, deleted: true } });
      },
    }),
  ];
}
