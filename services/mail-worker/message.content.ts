import { DateTime } from 'luxon';
import { formatDateRange } from '../../shared/calendar/format';
import { escapeHtml, htmlToText } from '../../shared/calendar/html';
import { PLATFORMS } from '../../shared/calendar/platforms';
import { localRecurrenceText } from '../../shared/i18n/recurrence';
import { intlDateRange } from '../../shared/i18n/dates';
import type { Locale, Translate } from '../../shared/i18n/translations';
import type { EventSnapshot, MailKind, MailMessage, RecipientLinks } from '../../shared/queues/mail.job';
import { type MailTextKey, mailTexts } from './i18n';
import { asHtml, bind, mapText, render, type Values } from './mail-template';
import { LATER, layout, platformLabel } from './message.layout';

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

/**
 * Why this person got the message, for the footer. Updates and cancellations also go to
 * people who answered on the event page without being invited (their answer is on the message).
 */
function reason(t: Translate<MailTextKey>, kind: MailKind, organizer: string, title: string, answered: boolean): string {
  const invited = t('reason_invited', { organizer, title });
  const answeredOn = t('reason_answered', { title });
  switch (kind) {
    case 'invitation':
      return invited;
    case 'update':
    case 'cancellation':
      return answered ? answeredOn : invited;
    case 'removal':
      return t('reason_removed', { organizer, title });
    case 'rsvp_link':
      return t('reason_rsvp_link', { title });
    case 'reminder':
      return t('reason_reminder', { title });
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

type When = Pick<EventSnapshot, 'isAllDay' | 'startMs' | 'endMs' | 'timezone'>;

/**
 * When, in the event's own zone with its UTC offset: "Tue 12 Jan 2027, 15:00–16:00
 * (Europe/Paris, UTC+01:00)"; over midnight, both days; across an offset change, both
 * offsets. All-day events are calendar days (stored as UTC midnights, the end day included).
 * Other languages than English: the days and times as Intl writes them there, the same
 * zone and offsets after them.
 */
function formatWhen(e: When, locale: Locale, t: Translate<MailTextKey>): string {
  const day = 'ccc d LLL yyyy';
  const intl = (zoneName: boolean) => intlDateRange(locale, e, { allDay: t('all_day'), zoneName });
  if (e.isAllDay) {
    if (locale !== 'en') return intl(false);
    const a = DateTime.fromMillis(e.startMs, { zone: 'UTC', locale: 'en-GB' }).toFormat(day);
    const b = DateTime.fromMillis(e.endMs, { zone: 'UTC', locale: 'en-GB' }).toFormat(day);
    return a === b ? `${a} (all day)` : `${a} – ${b} (all day)`;
  }
  const start = DateTime.fromMillis(e.startMs, { zone: e.timezone, locale: 'en-GB' });
  const end = DateTime.fromMillis(e.endMs, { zone: e.timezone, locale: 'en-GB' });
  const offset = (t: DateTime) => (t.offset === 0 ? 'UTC' : `UTC${t.toFormat('ZZ')}`);
  const range =
    locale !== 'en'
      ? intl(false)
      : start.hasSame(end, 'day')
        ? `${start.toFormat(`${day}, HH:mm`)}–${end.toFormat('HH:mm')}`
        : `${start.toFormat(`${day}, HH:mm`)} – ${end.toFormat(`${day}, HH:mm`)}`;
  const offsets = start.offset === end.offset ? offset(start) : `${offset(start)} → ${offset(end)}`;
  const zone = e.timezone === 'UTC' || e.timezone === 'Etc/UTC' ? '' : `${e.timezone}, `;
  return `${range} (${zone}${offsets})`;
}

/** The subject's When: in English the form used everywhere else (shared/calendar/format.ts); otherwise Intl's, with the zone's name. */
const subjectWhen = (e: When, locale: Locale, t: Translate<MailTextKey>) =>
  locale === 'en' ? formatDateRange({ isAllDay: e.isAllDay, startMs: e.startMs, endMs: e.endMs, zone: e.timezone }) : intlDateRange(locale, e, { allDay: t('all_day'), zoneName: true });

/** Where: a link when the location is an address on the web; otherwise the place, linked to a map search. */
function where(location: string, t: Translate<MailTextKey>): { html: string; text: string[] } {
  const place = location.trim();
  if (URL_ONLY.test(place)) return { html: `<a href="${escapeHtml(place)}">${escapeHtml(place)}</a>`, text: [place] };
  const lines = place.split('\n').map((line) => line.trim()).filter(Boolean);
  const map = `https://www.openstreetmap.org/search?query=${encodeURIComponent(lines.join(', '))}`;
  return {
    html: `<a href="${escapeHtml(map)}">${lines.map(escapeHtml).join('<br>')}</a>`,
    text: [...lines, `${t('map')}${t('colon')}${map}`],
  };
}

/** Headings of a description as big as the rest of its text, in clients that drop the layout's <style> too. */
const HEADING = /<h([1-6])\b([^<>]*)>/gi;
const quietHeadings = (html: string) => html.replace(HEADING, '<h$1$2 style="margin:16px 0 4px;font-size:17px;line-height:24px;font-weight:700">');

/**
 * The subject and bodies of a job's messages, in its language. The layout (compiled once
 * per language) is filled with everything the job's messages share; each recipient's
 * links and footer are added per message (a few concatenations).
 */
export async function jobContent(kind: MailKind, e: EventSnapshot, answerUrl?: string, locale: Locale = 'en'): Promise<JobContent> {
  const template = await layout(locale);
  const t = mailTexts(locale);
  // "Label: value" in the language (French puts a space before the colon, Japanese writes a full-width one).
  const colon = t('colon');
  const labelled = (label: string, value: string) => `${label}${colon}${value}`;
  const lead = t(`lead_${kind}`);
  const subject = labelled(t(`subject_${kind}`), `${e.title} @ ${subjectWhen(e, locale, t)}`);
  const when = formatWhen(e, locale, t);
  const page = NO_PAGE_LINK.has(kind) ? null : e.url;
  const calendarLinks = e.url && !NO_CALENDAR_BUTTONS.has(kind) ? platformLinks(e.url) : null;
  const place = e.location?.trim() ? where(e.location, t) : null;
  const repeats = e.recurrenceRule ? localRecurrenceText(e.recurrenceRule, e.timezone, locale) : null;
  const organizer = e.organizer?.name.trim() || null;
  const cancelled = kind === 'cancellation';

  // What every recipient's HTML shares, its line breaks made CRLF once for all of them
  // (the description may have its own); what is filled per recipient has none.
  const shared = mapText(
    bind(
      template,
      {
        subject,
        preview: `${labelled(lead, e.title)}, ${when}`,
        lead: `${lead}${colon.trimEnd()}`,
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
        note: t(`note_${kind}`),
      },
      LATER,
    ),
    crlf,
  );

  const textHead = [
    `${lead}${colon.trimEnd()}`,
    '',
    cancelled ? t('title_cancelled', { title: e.title }) : e.title,
    ...(organizer ? [t('organized_by', { name: organizer })] : []),
    '',
    labelled(t('when'), when),
    ...(place ? [labelled(t('where'), place.text.join('\n  '))] : []),
    ...(repeats ? [labelled(t('repeats'), repeats)] : []),
  ];
  const textMiddle = [
    ...(page ? ['', labelled(t('event_page'), page)] : []),
    ...(answerUrl ? ['', labelled(t('change_answer'), answerUrl)] : []),
    ...(calendarLinks
      ? ['', `${t('add_to_calendar')}${colon.trimEnd()}`, ...PLATFORMS.map((p) => `  ${labelled(platformLabel(p, t), `${calendarLinks.path}/${p.key}${calendarLinks.query}`)}`)]
      : []),
    ...(e.descriptionHtml ? ['', htmlToText(e.descriptionHtml)] : []),
    '',
    t(`note_${kind}`),
    '',
    '--',
  ];
  const who = organizer ?? t('the_organizer');
  const answerLinks = (links?: RecipientLinks) => (NO_ANSWER_BUTTONS.has(kind) ? undefined : links?.answer);
  const answered = (m: Pick<MailMessage, 'answer'>) => m.answer !== undefined;
  // A reminder's link stops that event's reminders; every other message's, all of the team's email.
  const stopLabel = t(kind === 'reminder' ? 'stop_reminders' : 'stop_all_mail');

  return {
    subject,
    bodies(m) {
      const answer = answerLinks(m.links);
      const unsubscribe = m.links?.unsubscribe;
      const because = oneLine(reason(t, kind, who, e.title, answered(m)));
      const values: Values = {
        answer: !!answer,
        yesUrl: answer?.yes ?? '',
        maybeUrl: answer?.maybe ?? '',
        noUrl: answer?.no ?? '',
        reason: because,
        unsubscribe: !!unsubscribe,
        unsubscribeUrl: unsubscribe ?? '',
        unsubscribeLabel: stopLabel,
      };
      const text = [
        ...textHead,
        ...(answer ? ['', t('will_you_attend'), `  ${labelled(t('yes'), answer.yes)}`, `  ${labelled(t('maybe'), answer.maybe)}`, `  ${labelled(t('no'), answer.no)}`] : []),
        ...textMiddle,
        because,
        ...(unsubscribe ? [labelled(stopLabel, unsubscribe)] : []),
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

