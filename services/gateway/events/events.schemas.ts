import { PLATFORM_KEYS } from '../public/deliver';
import Joi from 'joi';
import { EVENT_TEXT_CHARS } from '../../../shared/events/limits';
import { calendarSchema, emailReminders } from '../calendars/calendars.schemas';
import { bool, cursorParam, dateInput, httpUrl, idParam, rrule, shortLink, label, text, timezone } from '../http/validation';

/** Writable event fields (docs/api.md, "Events"), without presence rules. */
const eventFields = {
  title: label(EVENT_TEXT_CHARS.title),
  internal_name: label(EVENT_TEXT_CHARS.internal_name).allow(null, ''),
  is_draft: bool(),
  description: text(EVENT_TEXT_CHARS.description).allow(null, '').description('HTML (sanitized) or plain text (becomes paragraphs)'),
  location: label(EVENT_TEXT_CHARS.location).allow(null, ''),
  is_all_day: bool(),
  recurrence_rule: rrule()
    .allow(null, '')
    .description('RFC 5545 RRULE (an RRULE: prefix is accepted). UNTIL is stored as RFC 5545 wants it beside the start: UTC for timed events (a date: the end of that day; a floating time: wall time in `timezone`), a date for all-day events.'),
  series_title: label(EVENT_TEXT_CHARS.series_title).allow(null, ''),
  has_rsvp: bool(),
  rsvp_limit: Joi.number().integer().min(1).max(1000000).allow(null),
  date_start: dateInput(),
  date_end: dateInput().description('On or after date_start. For all-day events, the inclusive last day.'),
  timezone: timezone(),
  busy_type: Joi.string().valid('busy', 'free').allow(null, '').description('Empty or null: not set'),
  reminder_before: Joi.number().integer().min(0).max(525600).allow(null).description('Minutes before the start'),
  email_reminders: emailReminders().description(
    "Email reminders: minutes before each occurrence's start, sent to the invitees who have not declined and to everyone whose RSVP is yes or maybe (see docs/email.md). null or []: none. Omitted on create: the calendar's `default_email_reminders`; on update: kept.",
  ),
  short_link: shortLink().allow(null, ''),
  location_url: httpUrl().allow(null, ''),
  image_url: httpUrl().allow(null, ''),
  access_code: text(64).minChars(4).allow(null).description('Write-only; protects the public pages. null removes it.'),
};

export const createEventBody = Joi.object({
  ...eventFields,
  title: eventFields.title.required(),
  date_start: eventFields.date_start.required(),
  date_end: eventFields.date_end.required(),
  timezone: eventFields.timezone.required(),
}).unknown(true);

export const updateEventBody = createEventBody.keys({
  send_invite_updates: bool().description('Email an update to every invitee and to everyone whose RSVP is yes or maybe'),
});

/** `POST /api/events`: `title` and `start`; everything else has a default. */
export const simpleEventBody = Joi.object({
  ...eventFields,
  start: dateInput().required().description('A bare date makes an all-day event'),
  end: dateInput().description('Default: one hour after start (all-day: the same day)'),
  timezone: eventFields.timezone.description("Default: the calendar's"),
  calendar: Joi.string().max(255).description("A cal_ id. Default: the team's oldest calendar, or a new \"My Calendar\""),
  title: eventFields.title.required(),
}).unknown(true);

export const withHtmlQuery = Joi.object({ with_html: bool().description('Add html_snippets to the response') }).unknown(true);

/** A single event's read: also `with_stats`. */
export const eventReadQuery = withHtmlQuery.keys({ with_stats: bool().description('Add `stats`: page views, adds to calendars by platform, RSVPs by answer and smart-link submissions by outcome, of all time (people, not bots)') });

const notifyInvitees = () =>
  bool().description('Email a cancellation to every invitee and to everyone whose RSVP is yes or maybe (default false)');

export const deleteEventBody = Joi.object({ notify_invitees: notifyInvitees() })
  .unknown(true);

/** The same flag as a query parameter (`?notify_invitees=true`); when both are sent they must agree. */
export const deleteEventQuery = Joi.object({ notify_invitees: notifyInvitees() }).unknown(true);

export interface DeleteEventFlags {
  notify_invitees?: boolean;
}

export const listEventsQuery = Joi.object({
  range: Joi.string().valid('all', 'upcoming', 'past').default('all').description('upcoming: not yet ended; past: ended'),
  search: text(255).allow('').description('Matches title or internal name'),
  calendar: Joi.string().max(255).description('A cal_ id. On a calendar\'s own path it applies too: another calendar matches nothing.'),
  start_date: dateInput().description('Events starting at or after this date (UTC when no offset is given)'),
  end_date: dateInput().description(
    'Events that have ended by this date: their end at or before it (UTC when no offset is given), the end range=past uses. An all-day event ends at the midnight after its last day, in its zone.',
  ),
  rsvp: bool(),
  invites: bool(),
  status: Joi.string().valid('approved', 'pending', 'rejected'),
  per_page: Joi.number().integer().min(1).max(200).default(50),
  cursor: cursorParam(),
}).unknown(true);

export const calendarEventParams = Joi.object({
  cal: idParam('cal_'),
  evt: idParam('evt_'),
});
export const eventParams = Joi.object({ evt: idParam('evt_') });

const offsetDateTime = () => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
const isoMicros = () => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

const LINK_KEYS = ['event_page', 'auto', 'google', 'apple', 'outlook', 'outlook_web', 'yahoo', 'office365', 'ics'] as const;
const HTML_KEYS = ['single-button', 'icon-buttons-single-row', 'icons', 'dot-sep', 'space-sep', 'iframe'] as const;

/** Counts under some of these keys. */
const counts = (keys: readonly string[]) => Joi.object(Object.fromEntries(keys.map((k) => [k, Joi.number().integer()])));
const keyed = (keys: readonly string[]) => Joi.object(Object.fromEntries(keys.map((k) => [k, Joi.string().required()])));

export const eventSchema = Joi.object({
  uid: Joi.string().required(),
  public_id: Joi.string().pattern(/^evt_/).required(),
  calendar_uid: Joi.string().pattern(/^cal_/).required(),
  short_link: Joi.string().allow(null).required(),
  title: Joi.string().required(),
  internal_name: Joi.string().allow(null).required(),
  is_draft: Joi.boolean().required(),
  description: Joi.string().allow(null).required(),
  location: Joi.string().allow(null).required(),
  is_all_day: Joi.boolean().required(),
  has_rsvp: Joi.boolean().required(),
  has_calendar_invites: Joi.boolean().required(),
  rsvp_limit: Joi.number().integer().allow(null).required(),
  rsvp_counts: Joi.object({ yes: Joi.number().integer().required(), maybe: Joi.number().integer().required(), no: Joi.number().integer().required() })
    .required()
    .description('Answers so far; `rsvp_limit` caps the yes answers'),
  is_recurring: Joi.boolean().required(),
  recurrence_rule: Joi.string().allow(null).required(),
  recurrence_text: Joi.string().allow(null).required(),
  series_title: Joi.string().allow(null).required(),
  date_start: offsetDateTime().required(),
  date_end: offsetDateTime().required(),
  timezone: Joi.string().allow(null).required(),
  busy_type: Joi.string().valid('busy', 'free').allow(null).required(),
  reminder_before: Joi.number().integer().allow(null).required(),
  email_reminders: Joi.array().items(Joi.number().integer()).required().description('Minutes before each occurrence, largest first; []: none'),
  date_range_formatted: Joi.string().required(),
  public_url: Joi.string().uri().required(),
  embed_url: Joi.string().uri().required(),
  location_url: Joi.string().allow(null).required(),
  image_url: Joi.string().allow(null).required(),
  timezone_readable: Joi.string().allow(null).required(),
  status: Joi.string().valid('approved', 'pending', 'rejected').required(),
  is_protected: Joi.boolean().required(),
  calendar: calendarSchema.required(),
  created_at: isoMicros().required(),
  updated_at: isoMicros().required(),
}).meta({ title: 'Event' });

/** Single-event answers: the event, its platform links and the HTML variants. */
export const singleEventSchema = Joi.object({
  data: eventSchema.required(),
  links: keyed(LINK_KEYS).required(),
  html: keyed(HTML_KEYS).required(),
  html_snippets: keyed(HTML_KEYS),
  stats: Joi.object({
    views: Joi.number().integer().required(),
    adds: counts(PLATFORM_KEYS).required().description('By platform (those with none left out)'),
    rsvps: counts(['yes', 'maybe', 'no']).required().description('By answer (those with none left out)'),
    submissions: counts(['processed', 'duplicate']).required().description('Smart-link submissions that made this event (`processed`) or repeated it (`duplicate`); those with none left out'),
  }).description('With with_stats=true (see docs/analytics.md)'),
});

export const eventListSchema = Joi.object({
  data: Joi.array().items(eventSchema).required(),
  meta: Joi.object({
    per_page: Joi.number().integer().required(),
    next_cursor: Joi.string().allow(null).required(),
  }).required(),
});

export const deletedEventSchema = Joi.object({
  data: Joi.object({
    public_id: Joi.string().required(),
    deleted: Joi.boolean().valid(true).required(),
    invitees_notified: Joi.number().integer().min(0).required(),
  }).required(),
});

export const eventLimitSchema = Joi.object({
  message: Joi.string().required(),
  current: Joi.number().integer().required(),
  limit: Joi.number().integer().required(),
  remaining: Joi.number().integer().required(),
  would_exceed_by: Joi.number().integer().required(),
  is_unlimited: Joi.boolean().required(),
  limit_type: Joi.string().valid('monthly').required(),
}).meta({ title: 'EventLimitExceeded' });

/** The writable fields as the service receives them after validation. */
export interface EventInput {
  title?: string;
  internal_name?: string | null;
  is_draft?: boolean;
  description?: string | null;
  location?: string | null;
  is_all_day?: boolean;
  recurrence_rule?: string | null;
  series_title?: string | null;
  has_rsvp?: boolean;
  rsvp_limit?: number | null;
  date_start?: string;
  date_end?: string;
  timezone?: string;
  busy_type?: 'busy' | 'free' | '' | null;
  reminder_before?: number | null;
  email_reminders?: number[] | null;
  short_link?: string | null;
  location_url?: string | null;
  image_url?: string | null;
  access_code?: string | null;
  send_invite_updates?: boolean;
}

export interface SimpleEventInput extends Omit<EventInput, 'date_start' | 'date_end'> {
  title: string;
  start: string;
  end?: string;
  calendar?: string;
}

export interface ListEventsQuery {
  range: 'all' | 'upcoming' | 'past';
  search?: string;
  calendar?: string;
  start_date?: string;
  end_date?: string;
  rsvp?: boolean;
  invites?: boolean;
  status?: 'approved' | 'pending' | 'rejected';
  per_page: number;
  cursor?: string;
}
