import Joi from 'joi';
import { uidFromPublicId } from '../../../shared/ids/ids';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import type { AppContext } from '../context';
import { requireCalendar } from '../calendars/calendars.service';
import { requireEvent } from '../events/events.service';
import { authOf } from '../http/auth';
import { errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { bool, utcDay } from '../http/validation';
import { type Figures, GROUP_BYS, type GroupBy, readAnalytics } from './analytics';

const DAY_MS = 86_400_000;
/** The longest span one request may read. */
const MAX_DAYS = 366;

const figures = {
  views: Joi.number().integer().required().description('Event and calendar page views'),
  adds: Joi.number().integer().required().description('Adds to a calendar: platform buttons and links, .ics downloads'),
  feed_fetches: Joi.number().integer().required().description("Feed fetches: subscribers' personal feeds (platform: theirs), the public calendar feed (`public`), events' own feeds (`event`)"),
  rsvps: Joi.number().integer().required().description('RSVP answers given (platform: the answer)'),
  submissions: Joi.number().integer().required().description('Smart-link submissions recorded, by the day they were received (platform: the outcome, `processed`, `duplicate` or `failed`)'),
};

const GROUP_FIELD: Record<GroupBy, string> = { day: 'date', platform: 'platform', referrer: 'referrer', utm_source: 'utm_source' };

interface AnalyticsQuery {
  calendar?: string;
  event?: string;
  from?: string;
  to?: string;
  group_by: GroupBy;
  bots: boolean;
}

export function analyticsRoutes(ctx: AppContext): RouteSpec[] {
  return [
    defineRoute<Record<string, never>, AnalyticsQuery>({
      method: 'get',
      path: '/api/analytics',
      operationId: 'getAnalytics',
      summary: 'Page views, adds to calendars, feed fetches and RSVPs',
      description:
        "The team's counts per UTC day, for one calendar or event if asked, between `from` and `to` (inclusive; default the last 30 days, at most 366), grouped by `day`, `platform` (adds by platform, feed fetches by the subscriber's platform, RSVPs by answer), `referrer` (the page view's referring host) or `utm_source`. People by default; `bots=true` reads what bots did (told apart by User-Agent). Counts are written every few seconds. Nothing that identifies a visitor is kept.",
      tags: ['Analytics'],
      auth: true,
      query: Joi.object({
        calendar: Joi.string().pattern(/^cal_[0-9A-Za-z]{16}$/).description('cal_… public id'),
        event: Joi.string().pattern(/^evt_[0-9A-Za-z]{16}$/).description('evt_… public id'),
        from: utcDay(),
        to: utcDay(),
        group_by: Joi.string()
          .valid(...GROUP_BYS)
          .default('day'),
        bots: bool().default(false),
      }),
      responses: {
        200: {
          description: 'The counts and their totals',
          body: Joi.object({
            data: Joi.array()
              .items(
                Joi.object({
                  date: Joi.string(),
                  platform: Joi.string().allow(''),
                  referrer: Joi.string().allow(''),
                  utm_source: Joi.string().allow(''),
                  ...figures,
                }),
              )
              .required(),
            meta: Joi.object({ from: Joi.string().required(), to: Joi.string().required(), group_by: Joi.string().required(), bots: Joi.boolean().required(), totals: Joi.object(figures).required() }).required(),
          }),
        },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ query }, req) => {
        const teamId = authOf(req).teamId;
        const today = ctx.clock.now().toISOString().slice(0, 10);
        const to = query.to ?? today;
        const from = query.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
        const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
        if (Number.isNaN(span) || span < 0) throw validationFailed({ from: ['The from field must be a day on or before to.'] });
        if (span >= MAX_DAYS) throw validationFailed({ from: [`The from and to fields may span at most ${MAX_DAYS} days.`] });
        const calendarId = query.calendar ? (await requireCalendar(ctx.db, teamId, query.calendar)).id : undefined;
        let eventId: number | undefined;
        if (query.event) {
          if (!uidFromPublicId('evt_', query.event)) throw notFound('Event');
          const found = await requireEvent(ctx.db, teamId, query.event);
          if (calendarId !== undefined && found.calendar.id !== calendarId) throw notFound('Event');
          eventId = found.event.id;
        }
        const rows = await readAnalytics(ctx.db, { teamId, from, to, groupBy: query.group_by, calendarId, eventId, bots: query.bots });
        const totals: Figures = { views: 0, adds: 0, feed_fetches: 0, rsvps: 0, submissions: 0 };
        for (const r of rows) for (const k of Object.keys(totals) as Array<keyof Figures>) totals[k] += r[k];
        const field = GROUP_FIELD[query.group_by];
        return ok({
          data: rows.map(({ key, ...counts }) => ({ [field]: key, ...counts })),
          meta: { from, to, group_by: query.group_by, bots: query.bots, totals },
        });
      },
    }),
  ];
}
