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
  return `reply+${h.inviteeId.toString(36)}-${macOf(appKey, h)}@${domain}`;
}

/** A reply address's parts, not yet verified: which invitee it names, and its MAC. */
export interface ReplyToken {
  inviteeId: number;
  mac: string;
}

/**
 * `reply+<1 to 11 base-36 digits>-<32 hex digits>@<domain>` (36^11 passes 2^53, so longer ids
 * cannot be ours). Anchored and without nested repetition: linear in the address's length.
 */
const REPLY_ADDRESS = /^reply\+([0-9a-z]{1,11})-([0-9a-f]{32})@(.+)$/;

/**
 * The token of `reply+<token>@<domain>` (any case), or null when the address is not one
 * of ours in form.
 */
export function parseReplyAddress(address: string, domain: string): ReplyToken | null {
  const lower = address.trim().toLowerCase();
  const m = REPLY_ADDRESS.exec(lower);
  if (!m || m[3] !== domain.toLowerCase()) return null;
  const inviteeId = parseInt(m[1], 36);
  return Number.isSafeInteger(inviteeId) && inviteeId > 0 ? { inviteeId, mac: m[2] } : null;
}

/** True when the token was made for this invitee of this event (constant-time compare). */
export function verifyReplyToken(appKey: string, token: ReplyToken, h: Omit<ReplyHolder, 'inviteeId'>): boolean {
  const expected = Buffer.from(macOf(appKey, { ...h, inviteeId: token.inviteeId }));
  const given = Buffer.from(token.mac);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
