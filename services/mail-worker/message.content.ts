import { DateTime } from 'luxon';
import { formatDateRange } from '../../shared/calendar/format';
import { escapeHtml, htmlToText } from '../../shared/calendar/html';
import { PLATFORMS } from '../../shared/calendar/platforms';
import { recurrenceText } from '../../shared/calendar/recurrence';
import type { EventSnapshot, MailKind, MailMessage, RecipientLinks } from '../../shared/queues/mail.job';
import { asHtml, bind, mapText, render, type Values } from './mail-template';
import { LATER, layout } from './message.layout';

/**
 * What one recipient reads: the two bodies (the subject is the job's, the calendar part
 * separate). The HTML comes with CRLF line breaks already, a MIME body's canonical form.
 */
interface MessageBodies {
  text: string;
  html: string;
}

/**
 * A job's messages as people read them: the subject, and the bodies of each recipient.
 * Everything but the recipient's own links and footer is worked out once per job.
 */
interface JobContent {
  subject: string;
  bodies(message: Pick<MailMessage, 'answer' | 'links'>): MessageBodies;
  /** Whether two recipients get the same bodies (neither has links, and their footer reads the same). */
  sameBodies(a: Pick<MailMessage, 'answer' | 'links'>, b: Pick<MailMessage, 'answer' | 'links'>): boolean;
}

const SUBJECT_PREFIX: Record<MailKind, string> = {
  invitation: 'Invitation',
  update: 'Updated invitation',
  cancellation: 'Cancelled',
  removal: 'No longer on the guest list',
  rsvp_yes: 'You are going',
  rsvp_maybe: 'You might go',
  rsvp_no: 'Not going',
  rsvp_link: 'Change your answer',
  reminder: 'Reminder',
};

const LEAD: Record<MailKind, string> = {
  invitation: 'You are invited to',
  update: 'This event has changed',
  cancellation: 'This event has been cancelled',
  removal: 'The organizer has taken you off the guest list of',
  rsvp_yes: 'Thank you for your answer. You said yes to',
  rsvp_maybe: 'Thank you for your answer. You said maybe to',
  rsvp_no: 'Thank you for your answer. You said no to',
  rsvp_link: 'An answer was given with this address on the event page of',
  reminder: 'Coming up',
};

const CALENDAR_NOTE: Record<MailKind, string> = {
  invitation: 'The attached invitation adds it to your calendar.',
  update: 'The attached update brings your calendar up to date.',
  cancellation: 'The attached cancellation removes it from your calendar.',
  removal: 'The attached cancellation removes it from your calendar. The event itself has not been cancelled.',
  rsvp_yes: 'The attached invitation adds it to your calendar as accepted.',
  rsvp_maybe: 'The attached invitation adds it to your calendar as tentative.',
  rsvp_no: 'The attached cancellation removes it from your calendar.',
  rsvp_link:
    'The button above shows the answer this address holds, and changes it: it is only for you, do not pass it on. Until it is used, that answer stays as it is (if the address had answered before, its earlier answer). If it was not you who answered, there is nothing you need to do.',
  reminder: 'This reminder changes nothing in your calendar.',
};

/**
 * Why this person got the message, for the footer. Updates and cancellations also go to
 * people who answered on the event page without being invited (their answer is on the message).
 */
function reason(kind: MailKind, organizer: string, title: string, answered: boolean): string {
  const invited = `You received this because ${organizer} invited you to ${title}.`;
  const answeredOn = `You received this because you answered on the event page of ${title}.`;
  switch (kind) {
    case 'invitation':
      return invited;
    case 'update':
    case 'cancellation':
      return answered ? answeredOn : invited;
    case 'removal':
      return `You received this because ${organizer} had invited you to ${title}.`;
    case 'rsvp_link':
      return `You received this because someone answered with this address on the event page of ${title}.`;
    case 'reminder':
      return `You received this because you are going to ${title}.`;
    default:
      return answeredOn;
  }
}

/** Kinds whose message shows no add-to-calendar buttons: the event is leaving the person's calendar, or is not the point. */
const NO_CALENDAR_BUTTONS: ReadonlySet<MailKind> = new Set(['cancellation', 'removal', 'rsvp_no', 'rsvp_link']);
/** Kinds that do not link the event page: a cancelled event's page is gone, someone taken off the list is not sent back to it, and an rsvp_link is about its answer link. */
const NO_PAGE_LINK: ReadonlySet<MailKind> = new Set(['cancellation', 'removal', 'rsvp_link']);
/** Kinds that never ask for an answer, whatever links the job carries. */
const NO_ANSWER_BUTTONS: ReadonlySet<MailKind> = new Set(['cancellation', 'removal']);

const URL_ONLY = /^https?:\/\/[^\s<>"]+$/i;

/**
 * When, in the event's own zone with its UTC offset: "Tue 12 Jan 2027, 15:00–16:00
 * (Europe/Paris, UTC+01:00)"; over midnight, both days; across an offset change, both
 * offsets. All-day events are calendar days (stored as UTC midnights, the end day included).
 */
function formatWhen(e: Pick<EventSnapshot, 'isAllDay' | 'startMs' | 'endMs' | 'timezone'>): string {
  const day = 'ccc d LLL yyyy';
  if (e.isAllDay) {
    const a = DateTime.fromMillis(e.startMs, { zone: 'UTC', locale: 'en-GB' }).toFormat(day);
    const b = DateTime.fromMillis(e.endMs, { zone: 'UTC', locale: 'en-GB' }).toFormat(day);
    return a === b ? `${a} (all day)` : `${a} – ${b} (all day)`;
  }
  const start = DateTime.fromMillis(e.startMs, { zone: e.timezone, locale: 'en-GB' });
  const end = DateTime.fromMillis(e.endMs, { zone: e.timezone, locale: 'en-GB' });
  const offset = (t: DateTime) => (t.offset === 0 ? 'UTC' : `UTC${t.toFormat('ZZ')}`);
  const range = start.hasSame(end, 'day') ? `${start.toFormat(`${day}, HH:mm`)}–${end.toFormat('HH:mm')}` : `${start.toFormat(`${day}, HH:mm`)} – ${end.toFormat(`${day}, HH:mm`)}`;
  const offsets = start.offset === end.offset ? offset(start) : `${offset(start)} → ${offset(end)}`;
  const zone = e.timezone === 'UTC' || e.timezone === 'Etc/UTC' ? '' : `${e.timezone}, `;
  return `${range} (${zone}${offsets})`;
}

/** Where: a link when the location is an address on the web; otherwise the place, linked to a map search. */
function where(location: string): { html: string; text: string[] } {
  const place = location.trim();
  if (URL_ONLY.test(place)) return { html: `<a href="${escapeHtml(place)}">${escapeHtml(place)}</a>`, text: [place] };
  const lines = place.split('\n').map((line) => line.trim()).filter(Boolean);
  const map = `https://www.openstreetmap.org/search?query=${encodeURIComponent(lines.join(', '))}`;
  return {
    html: `<a href="${escapeHtml(map)}">${lines.map(escapeHtml).join('<br>')}</a>`,
    text: [...lines, `Map: ${map}`],
  };
}

/** Headings of a description as big as the rest of its text, in clients that drop the layout's <style> too. */
const HEADING = /<h([1-6])\b([^<>]*)>/gi;
const quietHeadings = (html: string) => html.replace(HEADING, '<h$1$2 style="margin:16px 0 4px;font-size:17px;line-height:24px;font-weight:700">');

/**
 * The subject and bodies of a job's messages. The layout (compiled once) is filled with
 * everything the job's messages share; each recipient's links and footer are added per
 * message (a few concatenations).
 */
export async function jobContent(kind: MailKind, e: EventSnapshot, answerUrl?: string): Promise<JobContent> {
  const template = await layout();
  const subject = `${SUBJECT_PREFIX[kind]}: ${e.title} @ ${formatDateRange({ isAllDay: e.isAllDay, startMs: e.startMs, endMs: e.endMs, zone: e.timezone })}`;
  const when = formatWhen(e);
  const page = NO_PAGE_LINK.has(kind) ? null : e.url;
  const calendarLinks = e.url && !NO_CALENDAR_BUTTONS.has(kind) ? platformLinks(e.url) : null;
  const place = e.location?.trim() ? where(e.location) : null;
  const repeats = e.recurrenceRule ? recurrenceText(e.recurrenceRule, e.timezone) : null;
  const organizer = e.organizer?.name.trim() || null;
  const cancelled = kind === 'cancellation';

  // What every recipient's HTML shares, its line breaks made CRLF once for all of them
  // (the description may have its own); what is filled per recipient has none.
  const shared = mapText(
    bind(
      template,
      {
        subject,
        preview: `${LEAD[kind]}: ${e.title}, ${when}`,
        lead: `${LEAD[kind]}:`,
        titleHtml: asHtml(cancelled ? `<s>${escapeHtml(e.title)}</s>` : escapeHtml(e.title)),
        when,
        organizer: !!organizer,
        organizerName: organizer ?? '',
        where: !!place,
        whereHtml: asHtml(place?.html ?? ''),
        repeats: !!repeats,
        repeatsText: repeats ?? '',
        actions: !!(page || answerUrl),
        page: !!page,
        pageUrl: page ?? '',
        changeAnswer: !!answerUrl,
        answerUrl: answerUrl ?? '',
        calendar: !!calendarLinks,
        pagePath: calendarLinks?.path ?? '',
        pageQuery: calendarLinks?.query ?? '',
        description: !!e.descriptionHtml,
        descriptionHtml: asHtml(e.descriptionHtml ? quietHeadings(e.descriptionHtml) : ''),
        note: CALENDAR_NOTE[kind],
      },
      LATER,
    ),
    crlf,
  );

  const textHead = [
    `${LEAD[kind]}:`,
    '',
    cancelled ? `${e.title} (cancelled)` : e.title,
    ...(organizer ? [`Organized by ${organizer}`] : []),
    '',
    `When: ${when}`,
    ...(place ? [`Where: ${place.text.join('\n  ')}`] : []),
    ...(repeats ? [`Repeats: ${repeats}`] : []),
  ];
  const textMiddle = [
    ...(page ? ['', `Event page: ${page}`] : []),
    ...(answerUrl ? ['', `Change your answer: ${answerUrl}`] : []),
    ...(calendarLinks ? ['', 'Add to calendar:', ...PLATFORMS.map((p) => `  ${p.label}: ${calendarLinks.path}/${p.key}${calendarLinks.query}`)] : []),
    ...(e.descriptionHtml ? ['', htmlToText(e.descriptionHtml)] : []),
    '',
    CALENDAR_NOTE[kind],
    '',
    '--',
  ];
  const who = organizer ?? 'the organizer';
  const answerLinks = (links?: RecipientLinks) => (NO_ANSWER_BUTTONS.has(kind) ? undefined : links?.answer);
  const answered = (m: Pick<MailMessage, 'answer'>) => m.answer !== undefined;

  return {
    subject,
    bodies(m) {
      const answer = answerLinks(m.links);
      const unsubscribe = m.links?.unsubscribe;
      const because = oneLine(reason(kind, who, e.title, answered(m)));
      const values: Values = {
        answer: !!answer,
        yesUrl: answer?.yes ?? '',
        maybeUrl: answer?.maybe ?? '',
        noUrl: answer?.no ?? '',
        reason: because,
        unsubscribe: !!unsubscribe,
        unsubscribeUrl: unsubscribe ?? '',
      };
      const text = [
        ...textHead,
        ...(answer ? ['', 'Will you attend?', `  Yes: ${answer.yes}`, `  Maybe: ${answer.maybe}`, `  No: ${answer.no}`] : []),
        ...textMiddle,
        because,
        ...(unsubscribe ? [`Stop reminders for this event: ${unsubscribe}`] : []),
        '',
      ].join('\n');
      return { text, html: render(shared, values) };
    },
    sameBodies: (a, b) => !a.links && !b.links && answered(a) === answered(b),
  };
}

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');
const oneLine = (text: string) => text.split(/[\r\n]+/).join(' ');

/** The event page's address split for its platform links, `{path}/{key}{query}`: the signed pair of a protected event goes on each. */
function platformLinks(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q) };
}

