import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The address an invitee's calendar app answers to: `reply+<token>@<REPLY_DOMAIN>`, where
 * the token is `<invitee row id, base 36>-<MAC>` and the MAC (HMAC-SHA256 with APP_KEY,
 * 128 bits as 32 hex digits) signs the invitee's and the event's random uids. Only the
 * service can make one; a token names exactly one invitee of one event, and stops working
 * when that invitee is removed (a new invitee with the same address has a new uid) or when
 * a restored or recreated database hands the row id to someone else (their uid differs).
 *
 * Lower-case letters, digits and `-` only: mail systems may change the case of a local
 * part, and some refuse other characters. At most 6 + 13 + 1 + 32 = 52 characters, under
 * the 64 a local part may have (RFC 5321 §4.5.3.1.1).
 */
const PREFIX = 'reply+';
const MAC_HEX = 32;

interface ReplyHolder {
  /** The invitee's row id (named in the token) and uid (signed). */
  inviteeId: number;
  inviteeUid: string;
  eventUid: string;
}

const macOf = (appKey: string, h: ReplyHolder) =>
  createHmac('sha256', appKey).update(`reply:${h.inviteeId}:${h.inviteeUid}:${h.eventUid}`).digest('hex').slice(0, MAC_HEX);

export function replyAddress(appKey: string, domain: string, h: ReplyHolder): string {
  return `${PREFIX}${h.inviteeId.toString(36)}-${macOf(appKey, h)}@${domain}`;
}

/** A reply address's parts, not yet verified: which invitee it names, and its MAC. */
export interface ReplyToken {
  inviteeId: number;
  mac: string;
}

const isBase36 = (s: string) => s.length > 0 && s.length <= 13 && [...s].every((c) => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'));
const isHex = (s: string) => s.length === MAC_HEX && [...s].every((c) => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));

/**
 * The token of `reply+<token>@<domain>` (any case), or null when the address is not one
 * of ours in form. Plain string steps, no pattern: the text comes from anyone on the net.
 */
export function parseReplyAddress(address: string, domain: string): ReplyToken | null {
  const lower = address.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0 || lower.slice(at + 1) !== domain.toLowerCase()) return null;
  const local = lower.slice(0, at);
  if (!local.startsWith(PREFIX)) return null;
  const token = local.slice(PREFIX.length);
  const dash = token.indexOf('-');
  if (dash < 0) return null;
  const id = token.slice(0, dash);
  const mac = token.slice(dash + 1);
  if (!isBase36(id) || !isHex(mac)) return null;
  const inviteeId = parseInt(id, 36);
  return Number.isSafeInteger(inviteeId) && inviteeId > 0 ? { inviteeId, mac } : null;
}

/** True when the token was made for this invitee of this event (constant-time compare). */
export function verifyReplyToken(appKey: string, token: ReplyToken, h: Omit<ReplyHolder, 'inviteeId'>): boolean {
  const expected = Buffer.from(macOf(appKey, { ...h, inviteeId: token.inviteeId }));
  const given = Buffer.from(token.mac);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
