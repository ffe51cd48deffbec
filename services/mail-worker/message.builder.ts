import { randomBytes } from 'node:crypto';
import type MailComposer from 'nodemailer/lib/mail-composer';
import MimeNode from 'nodemailer/lib/mime-node';
import type { Mailbox } from '../../shared/config/mailbox';
import { ATTENDEE_ANSWER, cancelsEvent, hasCalendarPart, isCancelKind, type MailJob, type MailMessage } from '../../shared/queues/mail.job';
import { icsPerAttendee } from './ics-template';
import { messageContent } from './message.content';

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
 * event never see each other's addresses). What the messages share is made once per job.
 * An `rsvp_link` message is only the bodies: it changes nothing in anyone's calendar.
 */
export async function messageFactory(
  job: Pick<MailJob, 'kind' | 'event' | 'answerUrl'>,
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
  const content = messageContent(kind, event, job.answerUrl);
  const withCalendar = hasCalendarPart(kind);
  // The bodies are the same in every message of the job: encoded once, then used as they are.
  const text = { raw: await encodedPart('text/plain; charset=utf-8', content.text) };
  const html = { raw: await encodedPart('text/html; charset=utf-8', content.html) };
  // Boundaries from one random base per job instead of fresh random bytes for every MIME part.
  const baseBoundary = randomBytes(8).toString('hex');
  return ({ deliveryId, to, answer: own, links }) => ({
    ...sender,
    to: to.name ? { name: to.name, address: to.email } : to.email,
    subject: content.subject,
    text,
    html,
    ...(withCalendar
      ? { icalEvent: { method, filename: cancel ? 'cancel.ics' : 'invite.ics', content: ics({ email: to.email, name: to.name && paramSafe(to.name), answer: own ?? answer }) } }
      : {}),
    // The same Message-ID on every attempt of this delivery, so a resend after a crash can
    // be recognised as the same message by the receiving side.
    messageId: deliveryMessageId(job, deliveryId),
    date: new Date(nowMs),
    headers: {
      'Auto-Submitted': 'auto-generated',
      // One-click unsubscribe (RFC 8058): mail clients POST the URL; a GET of it changes nothing.
      ...(links?.unsubscribe ? { 'List-Unsubscribe': `<${links.unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
    },
    // Parts that need an encoding (non-ASCII, long lines) get base64, which nodemailer
    // makes several times faster than quoted-printable; plain parts stay 7bit either way.
    textEncoding: 'base64',
    baseBoundary,
  });
}

/**
 * A name as an iCalendar parameter value (CN="…"), which cannot hold a double quote
 * (RFC 5545 §3.1): parsers reject the escaped form, so it becomes a single quote.
 */
const paramSafe = (name: string) => name.replace(/"/g, "'");

/**
 * A body part with its MIME headers, encoded by nodemailer as it would be inside the
 * message. Text goes in canonical form (CRLF line breaks, RFC 2046), so a 7bit part is
 * right in an .eml file too, not only after SMTP's own line-ending fix-up.
 */
function encodedPart(contentType: string, content: string): Promise<Buffer> {
  const canonical = content.replace(/\r?\n/g, '\r\n');
  return new MimeNode('multipart/alternative').createChild(contentType, { textEncoding: 'base64' }).setContent(canonical).build();
}

export const deliveryMessageId = (job: Pick<MailJob, 'kind' | 'event'>, deliveryId: number) =>
  `<d${deliveryId}.${job.kind}.${job.event.sequence}.evt_${job.event.uid}@${job.event.uidHost.replace(/:\d+$/, '')}>`;
