import Joi from 'joi';
import { bool, emailAddress, idParam, shortLink, label, text, timezone } from '../http/validation';
import { LOCALES } from '../public/i18n';
import { FEED_WINDOW } from '../public/calendar-feed';
import { EMAIL_REMINDERS } from '../../../shared/mail/reminders';

/** Email reminder offsets, as events and calendars take them. */
export const emailReminders = () =>
  Joi.array()
    .items(Joi.number().integer().min(0).max(EMAIL_REMINDERS.maxMinutes))
    .max(EMAIL_REMINDERS.max)
    .unique()
    .allow(null);

const isoMicros = () => Joi.string().description('ISO 8601 UTC with microseconds, e.g. 2026-03-05T10:00:00.123456Z');

const writable = {
  name: label(255),
  internal_name: label(255).allow(null, ''),
  description: text(20000).allow(null, ''),
  timezone: timezone(),
  week_begins: Joi.number().integer().min(0).max(6).description('First day of the week: 0 = Sunday … 6 = Saturday'),
  locale: Joi.string()
    .valid(...LOCALES)
    .allow(null)
    .description(
      `The calendar's language: ${LOCALES.join(', ')}; null (the default): English. Its public pages are in it for a visitor who asks for none of ours (\`?lang=\` and Accept-Language come first), and its emails to invitees and to people who answered (invitations, updates, cancellations, reminders) are written in it; an answer given on the event page is confirmed in the language that page was shown in`,
    ),
  short_link: shortLink().allow(null, '').description('Empty or null: none'),
  ask_subscriber_details: bool().description('Ask people for their name and email before they subscribe'),
  organizer_name: label(255).allow(null, '').description("Shown as the organizer of the calendar's invitations; empty: the organizer's own name"),
  organizer_email: emailAddress().allow(null, '').description("Whom invitees' calendar apps send their answers to (the invitations' ORGANIZER and the emails' Reply-To); empty: the team's owner"),
  feed_past_days: Joi.number()
    .integer()
    .min(0)
    .max(FEED_WINDOW.pastDays.max)
    .allow(null)
    .description(`How many days of past events the ICS feed keeps; null: the default, ${FEED_WINDOW.pastDays.default}`),
  feed_max_events: Joi.number()
    .integer()
    .min(1)
    .max(FEED_WINDOW.maxEvents.max)
    .allow(null)
    .description(`The most events the ICS feed holds, upcoming ones first; null: the default, ${FEED_WINDOW.maxEvents.default}`),
  default_email_reminders: emailReminders().description(
    `What a new event of the calendar gets as \`email_reminders\` when it names none: minutes before each occurrence (at most ${EMAIL_REMINDERS.max}, each 0-${EMAIL_REMINDERS.maxMinutes}); null or [] (the default): no reminders`,
  ),
};

export const createCalendarBody = Joi.object({
  ...writable,
  name: writable.name.required(),
  timezone: writable.timezone.required(),
}).unknown(true);

/** PUT: the create body's required fields stay required; omitted optional ones keep their value. */
export const updateCalendarBody = createCalendarBody;

export const calendarParams = Joi.object({ cal: idParam('cal_') });

export const calendarSchema = Joi.object({
  uid: Joi.string().required(),
  public_id: Joi.string().pattern(/^cal_/).required(),
  short_link: Joi.string().allow(null).required(),
  name: Joi.string().required(),
  internal_name: Joi.string().allow(null).required(),
  description: Joi.string().allow('').required(),
  timezone: Joi.string().required(),
  week_begins: Joi.number().integer().min(0).max(6).required(),
  locale: Joi.string().allow(null).required().description("The emails' language, and the public pages' when the visitor's browser names none of ours; null: English"),
  public_url: Joi.string().uri().required(),
  ask_subscriber_details: Joi.boolean().required(),
  organizer_name: Joi.string().allow(null).required(),
  organizer_email: Joi.string().allow(null).required().description("null: the team's owner"),
  feed_past_days: Joi.number().integer().allow(null).required().description('Days of past events in the feed; null: the default'),
  feed_max_events: Joi.number().integer().allow(null).required().description('The most events in the feed; null: the default'),
  default_email_reminders: Joi.array().items(Joi.number().integer()).required().description("New events' email reminders when they name none (minutes before); []: none"),
  created_at: isoMicros().required(),
  updated_at: isoMicros().required(),
}).meta({ title: 'Calendar' });

export interface CalendarInput {
  name: string;
  internal_name?: string | null;
  description?: string | null;
  timezone: string;
  week_begins?: number;
  locale?: string | null;
  short_link?: string | null;
  ask_subscriber_details?: boolean;
  feed_past_days?: number | null;
  feed_max_events?: number | null;
  default_email_reminders?: number[] | null;
  organizer_name?: string | null;
  organizer_email?: string | null;
}
