import { formatDateRange } from '../../shared/calendar/format';
import { escapeHtml, htmlToText } from '../../shared/calendar/html';
import { recurrenceText } from '../../shared/calendar/recurrence';
import type { EventSnapshot, MailKind } from '../../shared/queues/mail.job';

/** What a person reads: the subject and the two bodies (the calendar part is separate). */
interface MessageContent {
  subject: string;
  text: string;
  html: string;
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
  rsvp_link: 'Someone asked to change the answer this address gave to',
  reminder: 'Coming up soon',
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
    'Your answer stays as it is unless you change it with the link above, which is only for you: do not pass it on. If it was not you who asked, there is nothing to do.',
  reminder: 'This reminder changes nothing in your calendar.',
};

/** The lines of the message that carry facts, in the order a reader looks for them. */
function facts(e: EventSnapshot, when: string): Array<[label: string, value: string]> {
  const out: Array<[string, string]> = [['When', when]];
  if (!e.isAllDay) out.push(['Time zone', e.timezone]);
  const repeats = e.recurrenceRule ? recurrenceText(e.recurrenceRule, e.timezone) : null;
  if (repeats) out.push(['Repeats', repeats]);
  if (e.location) out.push(['Where', e.location]);
  return out;
}

/**
 * The subject and bodies of a fan-out's messages. They are the same for every recipient
 * (the recipient is in the To header and the calendar part's ATTENDEE), so a job makes
 * them once for all its messages.
 */
export function messageContent(kind: MailKind, e: EventSnapshot, answerUrl?: string): MessageContent {
  const when = formatDateRange({ isAllDay: e.isAllDay, startMs: e.startMs, endMs: e.endMs, zone: e.timezone });
  const subject = `${SUBJECT_PREFIX[kind]}: ${e.title} @ ${when}`;
  // A cancelled event's page is gone, and someone taken off the guest list is not sent
  // back to it; every other message links to it, but the one whose point is the answer link.
  const link = kind === 'cancellation' || kind === 'removal' || kind === 'rsvp_link' ? null : e.url;
  const lines = facts(e, when);

  const text = [
    `${LEAD[kind]}:`,
    '',
    e.title,
    '',
    ...lines.map(([label, value]) => `${label}: ${value.replace(/\n/g, '\n  ')}`),
    ...(e.descriptionHtml ? ['', htmlToText(e.descriptionHtml)] : []),
    ...(link ? ['', `Event page: ${link}`] : []),
    ...(answerUrl ? ['', `Change your answer: ${answerUrl}`] : []),
    '',
    CALENDAR_NOTE[kind],
    '',
  ].join('\n');

  const cell = 'padding:2px 12px 2px 0;vertical-align:top';
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#222;line-height:1.45">
<p>${escapeHtml(LEAD[kind])}:</p>
<h2 style="margin:0 0 12px${kind === 'cancellation' ? ';text-decoration:line-through' : ''}">${escapeHtml(e.title)}</h2>
<table role="presentation" style="border-collapse:collapse">
${lines.map(([label, value]) => `<tr><th align="left" style="${cell}">${label}</th><td style="${cell}">${escapeHtml(value).replace(/\n/g, '<br>')}</td></tr>`).join('\n')}
</table>
${e.descriptionHtml ? `<div style="margin-top:12px">${e.descriptionHtml}</div>` : ''}
${link ? `<p><a href="${escapeHtml(link)}">Open the event page</a></p>` : ''}
${answerUrl ? `<p><a href="${escapeHtml(answerUrl)}">Change your answer</a></p>` : ''}
<p style="color:#666">${escapeHtml(CALENDAR_NOTE[kind])}</p>
</body></html>
`;
  return { subject, text, html };
}
