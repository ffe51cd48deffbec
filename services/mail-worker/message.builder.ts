import type Mail from 'nodemailer/lib/mailer';
import { buildIcs } from '../../shared/calendar/ics';
import type { Mailbox } from '../../shared/config/mailbox';
import type { MailJob } from '../../shared/queues/mail-jobs';
import { messageContent } from './message.content';

/**
 * A message in RFC 6047 form: the readable bodies plus the iTIP object as a
 * `text/calendar; method=REQUEST|CANCEL` alternative (nodemailer's icalEvent, which also
 * attaches it as an .ics file for clients that only look at attachments). The calendar
 * part comes from the same builder as the public .ics files, so the UID is the event's
 * UID everywhere; ORGANIZER is the sender, ATTENDEE the recipient (alone: invitees of one
 * event never see each other's addresses).
 */
export function buildMessage(job: MailJob, from: { header: string; mailbox: Mailbox }, nowMs: number): Mail.Options {
  const { event, kind, to } = job;
  const method = kind === 'cancellation' ? 'CANCEL' : 'REQUEST';
  const cancel = kind === 'cancellation';
  // A cancelled event's page is gone and its reminder moot: neither goes into the CANCEL.
  const ics = buildIcs([{ ...event, cancelled: cancel, url: cancel ? null : event.url, reminderBefore: cancel ? null : event.reminderBefore }], {
    uidHost: event.uidHost,
    method,
    organizer: { name: from.mailbox.name, email: from.mailbox.email },
    attendees: [{ email: to.email, name: to.name }],
    stampMs: nowMs,
  });
  const content = messageContent(kind, event, to.name);
  return {
    from: from.header,
    to: to.name ? { name: to.name, address: to.email } : to.email,
    subject: content.subject,
    text: content.text,
    html: content.html,
    icalEvent: { method, filename: cancel ? 'cancel.ics' : 'invite.ics', content: ics },
    // The same Message-ID on every attempt of this delivery, so a resend after a crash can
    // be recognised as the same message by the receiving side.
    messageId: deliveryMessageId(job),
    date: new Date(nowMs),
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}

export const deliveryMessageId = (job: MailJob) => `<d${job.deliveryId}.${job.kind}.${job.event.sequence}.evt_${job.event.uid}@${job.event.uidHost.replace(/:\d+$/, '')}>`;
