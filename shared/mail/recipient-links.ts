import type { Config } from '../config/config';
import { replyAddress } from '../invites/reply-address';
import { type AnswerEvent, answerKey, inviteeAnswerKey, unsubscribeUrl } from '../links/signatures';
import type { MailKind, MailMessage } from '../queues/mail.job';
import type { NewDelivery } from './queue-mail';

/** Kinds whose message carries the Yes / Maybe / No buttons (when the event takes RSVPs). */
const ANSWERABLE: ReadonlySet<MailKind> = new Set<MailKind>(['invitation', 'update', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'reminder']);

/** The page an answer button opens: it shows the answer and records it with one more click (a POST). */
const answerPageUrl = (baseUrl: string, eventUid: string, key: string, answer: 'yes' | 'maybe' | 'no') =>
  `${baseUrl}/e/${eventUid}/reply?key=${encodeURIComponent(key)}&answer=${answer}`;

/**
 * What one recipient's message carries that no one else's does: the links made for them
 * (a reminder's unsubscribe link, made by the sweep; in every other message, the link that
 * stops all email from the event's team), the answer buttons, signed for them (an invitee's key,
 * or the key of the RSVP they gave), and, with REPLY_DOMAIN, an invitee's own reply
 * address (see shared/invites/reply-address.ts).
 */
export function withRecipientParts(
  config: Pick<Config, 'appKey' | 'publicBaseUrl' | 'replyDomain'>,
  event: AnswerEvent,
  kind: MailKind,
  d: NewDelivery,
): Pick<MailMessage, 'links' | 'replyAddress'> {
  const out: Pick<MailMessage, 'links' | 'replyAddress'> = d.links ? { links: { ...d.links } } : {};
  if (kind !== 'reminder') out.links = { ...out.links, unsubscribe: unsubscribeUrl(config.appKey, config.publicBaseUrl, 'all', event.uid, d.email) };
  if (config.replyDomain && d.invitee_id && d.invitee_uid) {
    out.replyAddress = replyAddress(config.appKey, config.replyDomain, { inviteeId: d.invitee_id, inviteeUid: d.invitee_uid, eventUid: event.uid });
  }
  if (event.has_rsvp && ANSWERABLE.has(kind)) {
    const key = d.invitee_uid
      ? inviteeAnswerKey(config.appKey, { eventUid: event.uid, inviteeUid: d.invitee_uid, email: d.email })
      : d.rsvp_uid
        ? answerKey(config.appKey, { eventUid: event.uid, rsvpUid: d.rsvp_uid, email: d.email }, event)
        : null;
    if (key) {
      const url = (answer: 'yes' | 'maybe' | 'no') => answerPageUrl(config.publicBaseUrl, event.uid, key, answer);
      out.links = { ...out.links, answer: { yes: url('yes'), maybe: url('maybe'), no: url('no') } };
    }
  }
  return out;
}
