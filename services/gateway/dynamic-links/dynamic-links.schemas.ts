import Joi from 'joi';
import { EVENT_TEXT_CHARS } from '../../../shared/events/limits';
import { bool, dateInput, rrule, label, text, timezone } from '../http/validation';

const DYN_SERVICES = ['google', 'apple', 'outlook', 'outlook_web', 'office365', 'yahoo', 'ics'] as const;
export type DynService = (typeof DYN_SERVICES)[number];

/** AddEvent's service names → ours. */
export const ADDEVENT_SERVICES: Record<string, DynService> = {
  google: 'google',
  outlook: 'outlook',
  outlookcom: 'outlook_web',
  office365: 'office365',
  yahoo: 'yahoo',
  apple: 'apple',
  appleical: 'apple',
  ical: 'ics',
  stream: 'ics',
};

export const dynamicLinkSchema = Joi.object({
  id: Joi.string().pattern(/^dk_/).required(),
  name: Joi.string().allow(null).required(),
  uses: Joi.number().integer().min(0).required().description('Pages and platform links served for this key'),
  last_used_at: Joi.string().allow(null).required(),
  page_url_example: Joi.string().uri().required(),
  created_at: Joi.string().required(),
}).meta({ title: 'DynamicLink' });

export const createDynamicLinkBody = Joi.object({ name: label(255).allow(null, '') }).unknown(true);

const common = {
  title: label(EVENT_TEXT_CHARS.title).required(),
  timezone: timezone().default('UTC'),
  // Shorter than a stored event's: a dynamic link carries its event in its URL.
  description: text(10000).allow(''),
  location: label(EVENT_TEXT_CHARS.location).allow(''),
};

/** A rule for an event that is not stored: its UNTIL is fitted as a stored event's is. */
const recurring = () => rrule().description('RFC 5545 RRULE; its UNTIL is fitted to the start as for stored events (timed: UTC, all-day: a date)');

export const dynQuery = Joi.object({
  uid: Joi.string().max(100).required().description('The dk_… key'),
  ...common,
  start: dateInput().required(),
  end: dateInput(),
  duration: Joi.number().integer().min(0).max(525600).description('Minutes; wins over end (all-day: whole days, at least one)'),
  all_day: bool(),
  recurring: recurring(),
  alarm: Joi.number().integer().min(0).max(525600).description('Minutes before the start'),
  service: Joi.string().valid(...DYN_SERVICES).description('Go straight to this platform'),
}).unknown(true);

export const dynAddEventQuery = Joi.object({
  client: Joi.string().max(100).required().description('The dk_… key'),
  ...common,
  start: Joi.string().max(40).required().description('e.g. 05/08/2026 09:00 AM (date_format decides day or month first), or ISO 8601'),
  end: Joi.string().max(40),
  date_format: Joi.string().valid('MM/DD/YYYY', 'DD/MM/YYYY').default('MM/DD/YYYY'),
  all_day_event: bool(),
  recurring: recurring(),
  alarm_reminder: Joi.number().integer().min(0).max(525600),
  service: Joi.string()
    .valid(...Object.keys(ADDEVENT_SERVICES), ...DYN_SERVICES)
    .description('AddEvent names: google, outlook, outlookcom, office365, yahoo, apple, stream'),
}).unknown(true);

/** The values of an event that is not stored, whichever endpoint they came from. */
export interface DynamicEventInput {
  key: string;
  title: string;
  start: string;
  end?: string;
  duration?: number;
  allDay?: boolean;
  timezone: string;
  description?: string;
  location?: string;
  recurring?: string;
  alarm?: number;
  service?: DynService;
}
