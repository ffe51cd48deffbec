import { randomBytes } from 'node:crypto';
import type MailComposer from 'nodemailer/lib/mail-composer';
import type { Mailbox } from '../../shared/config/mailbox';
import { ATTENDEE_ANSWER, cancelsEvent, hasCalendarPart, isCancelKind, type MailJob, type MailMessage } from '../../shared/queues/mail.job';
import { icsPerAttendee } from './ics-template';
import { jobContent } from './message.content';

export type Sender = { header: string; mailbox: Mailbox };

/**
 * The messages of one job in RFC 6047 form: the readable bodies plus the iTIP object as a
 * `text/calendar; method=REQUEST|CANCEL` alternative (nodemailer's icalEvent, which also
 * attaches it as an .ics file for clients that only look at attachments). An RSVP
 * confirmation is a REQUEST whose ATTENDEE has already answered (PARTSTAT, no reply asked),
 * so the calendar app adds the event as accepted or tentative; updates and cancellations
 * to someone who answered keep their answer the same way. The calendar
 * part comes from the same builder as the public .ics files, so the UID is the event's
 * UID everywhere; ORGANIZER is the sender, ATTENDEE the recipient (alone: invitees of one
 * event never see each other's addresses). What the messages share is made once per job;
 * the bodies are each recipient's (their answer buttons, their unsubscribe link), and a
 * recipient without links of their own reuses the encoded bodies of the last one like them.
 * An `rsvp_link` message is only the bodies: it changes nothing in anyone's calendar.
 */
export async function messageFactory(
  job: Pick<MailJob, 'kind' | 'event' | 'answerUrl' | 'locale'>,
  from: Sender,
  nowMs: number,
): Promise<(message: MailMessage) => MailComposer.Options> {
  const { event: snapshot, kind } = job;
  const { organizer: named, ...event } = snapshot;
  const cancel = isCancelKind(kind);
  const method = cancel ? 'CANCEL' : 'REQUEST';
  // A cancelled event's page is gone and its reminder moot: neither goes into the CANCEL.
  // STATUS:CANCELLED only when the event itself is cancelled, not when one person is taken off it.
  // The calendar's organizer, whom calendar apps send an answer to (the sender for jobs queued without one).
  const organizer = named ?? { name: from.mailbox.name, email: from.mailbox.email };
  const ics = icsPerAttendee(
    { ...event, cancelled: cancelsEvent(kind), url: cancel ? null : event.url, reminderBefore: cancel ? null : event.reminderBefore },
    { uidHost: event.uidHost, method, organizer: { name: paramSafe(organizer.name), email: organizer.email }, stampMs: event.stampMs },
  );
  // From stays the service's address (its SPF and DKIM), named for the organizer; replies go to them.
  const sender = named
    ? { from: { name: `${named.name} via ${from.mailbox.name || 'Calendar'}`, address: from.mailbox.email }, replyTo: { name: named.name, address: named.email } }
    : { from: from.header };
  const answer = ATTENDEE_ANSWER[kind];
  const content = await jobContent(kind, snapshot, job.answerUrl, job.locale);
  const withCalendar = hasCalendarPart(kind);
  // A recipient without links of their own gets the encoded bodies of the one before them.
  let last: { message: MailMessage; text: { raw: Buffer }; html: { raw: Buffer } } | undefined;
  const bodiesOf = (message: MailMessage) => {
    if (last && content.sameBodies(last.message, message)) return last;
    const bodies = content.bodies(message);
    last = { message, text: { raw: encodedPart('text/plain; charset=utf-8', bodies.text) }, html: { raw: encodedPart('text/html; charset=utf-8', bodies.html, true) } };
    return last;
  };
  // Boundaries from one random base per job instead of fresh random bytes for every MIME part.
  const baseBoundary = randomBytes(8).toString('hex');
  return (message) => {
    const { deliveryId, to, answer: own, links, replyAddress } = message;
    const { text, html } = bodiesOf(message);
    return {
      ...sender,
      to: to.name ? { name: to.name, address: to.email } : to.email,
      // An invitee's own reply address is also the envelope sender, so a bounce names them (VERP).
      ...(replyAddress ? { envelope: { from: replyAddress, to: to.email } } : {}),
      subject: content.subject,
      text,
      html,
      ...(withCalendar
        ? { icalEvent: { method, filename: cancel ? 'cancel.ics' : 'invite.ics', content: ics({ email: to.email, name: to.name && paramSafe(to.name), answer: own ?? answer, organizerEmail: replyAddress }) } }
        : {}),
      // The same Message-ID on every attempt of this delivery, so a resend after a crash can
      // be recognised as the same message by the receiving side.
      messageId: deliveryMessageId(job, deliveryId),
      date: new Date(nowMs),
      headers: links?.unsubscribe
        ? // One-click unsubscribe (RFC 8058): the mail client POSTs to the link itself.
          { 'Auto-Submitted': 'auto-generated', 'List-Unsubscribe': `<${links.unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }
        : { 'Auto-Submitted': 'auto-generated' },
      // Parts that need an encoding (non-ASCII, long lines) get base64, which nodemailer
      // makes several times faster than quoted-printable; plain parts stay 7bit either way.
      textEncoding: 'base64',
      baseBoundary,
    };
  };
}

/**
 * A name as an iCalendar parameter value (CN="…"), which cannot hold a double quote
 * (RFC 5545 §3.1): parsers reject the escaped form, so it becomes a single quote.
 */
const paramSafe = (name: string) => name.replace(/"/g, "'");

/** Characters that keep a part from going as 7bit (nodemailer's own test, mime-funcs isPlainText). */
// eslint-disable-next-line no-control-regex
const NOT_PLAIN = /[\x00-\x08\x0b\x0c\x0e-\x1f\u0080-\uffff]/;

/**
 * A body part with its MIME headers, encoded as nodemailer would inside the message
 * (7bit when it is plain ASCII in lines of at most 76 characters, base64 in 76-character
 * lines otherwise), but at once, without nodemailer's streams: each recipient's bodies are
 * encoded in turn. Text goes in canonical form (CRLF line breaks, RFC 2046), so a 7bit
 * part is right in an .eml file too, not only after SMTP's own line-ending fix-up.
 */
function encodedPart(contentType: string, content: string, isCanonical = false): Buffer {
  const canonical = isCanonical ? content : content.replace(/\r?\n/g, '\r\n');
  const head = `Content-Type: ${contentType}\r\nContent-Transfer-Encoding: `;
  if (!hasLongLine(canonical, 76) && !NOT_PLAIN.test(canonical)) return Buffer.from(`${head}7bit\r\n\r\n${canonical}\r\n`, 'latin1');
  const base64 = Buffer.from(canonical, 'utf8').toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 76) lines.push(base64.slice(i, i + 76));
  return Buffer.from(`${head}base64\r\n\r\n${lines.join('\r\n')}\r\n`, 'latin1');
}

function hasLongLine(text: string, max: number): boolean {
  let start = 0;
  for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
    if (end - start > max + 1) return true; // the line, its \r not counted
    start = end + 1;
  }
  return text.length - start > max;
}

export const deliveryMessageId = (job: Pick<MailJob, 'kind' | 'event'>, deliveryId: number) =>
  `<d${deliveryId}.${job.kind}.${job.event.sequence}.evt_${job.event.uid}@${job.event.uidHost.replace(/:\d+$/, '')}>`;
