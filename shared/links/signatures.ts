import { createHmac, timingSafeEqual } from 'node:crypto';
import { eventPublicUrl } from './public-urls';

/**
 * Signed access to protected events, with APP_KEY (the same in every process):
 * - signed URLs: `expires` (unix seconds) + `signature` = HMAC-SHA256 of
 *   "event:{uid}:{expires}:{access_code_hash}"; one pair opens the event page and every
 *   platform link of that event until it expires;
 * - unlock cookies: "{expires}.{hmac of unlock:{uid}:{expires}:{access_code_hash}}", set
 *   after the right code.
 * Both cover the event's stored code hash (salted afresh for every code set), so a new code
 * revokes every pair and cookie made before it. Comparisons are constant-time.
 */
const mac = (key: string, message: string) => createHmac('sha256', key).update(message).digest('base64url');

/**
 * Constant time (crypto.timingSafeEqual) over the MAC text. Texts of unequal length end the
 * comparison at once, which tells only the length of an HMAC: public (43 characters).
 */
function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The event as access to it is signed: its uid and its current code's hash. */
interface ProtectedEvent {
  uid: string;
  access_code_hash: string;
}

function signEventAccess(appKey: string, event: ProtectedEvent, expires: number): string {
  return mac(appKey, `event:${event.uid}:${expires}:${event.access_code_hash}`);
}

/** The event page with a signed pair: opens it and its platform links until `expires` (unix seconds). */
export function signedEventUrl(appKey: string, baseUrl: string, event: ProtectedEvent, expires: number): string {
  return `${eventPublicUrl(baseUrl, event.uid)}?expires=${expires}&signature=${signEventAccess(appKey, event, expires)}`;
}

/** `expires` exactly as it was signed: unix seconds in canonical form (no sign, no leading zero). */
const CANONICAL_SECONDS = /^[1-9]\d{0,11}$/;

/** True for an untampered, unexpired pair, written exactly as it was issued. */
export function verifyEventAccess(appKey: string, event: ProtectedEvent, expires: unknown, signature: unknown, nowMs: number): boolean {
  if (typeof expires !== 'string' || typeof signature !== 'string' || !CANONICAL_SECONDS.test(expires) || signature.length > 100) return false;
  if (Number(expires) * 1000 <= nowMs) return false;
  return sameMac(signature, signEventAccess(appKey, event, Number(expires)));
}

export const UNLOCK_COOKIE_SECONDS = 12 * 3600;
export const unlockCookieName = (uid: string) => `unlock_${uid}`;

const unlockMac = (appKey: string, event: ProtectedEvent, expires: string | number) => mac(appKey, `unlock:${event.uid}:${expires}:${event.access_code_hash}`);

export function unlockCookieValue(appKey: string, event: ProtectedEvent, nowMs: number): string {
  const expires = Math.floor(nowMs / 1000) + UNLOCK_COOKIE_SECONDS;
  return `${expires}.${unlockMac(appKey, event, expires)}`;
}

export function verifyUnlockCookie(appKey: string, event: ProtectedEvent, value: string | undefined, nowMs: number): boolean {
  const m = /^([1-9]\d{0,11})\.([A-Za-z0-9_-]{10,100})$/.exec(value ?? '');
  if (!m) return false;
  if (Number(m[1]) * 1000 <= nowMs) return false;
  return sameMac(m[2], unlockMac(appKey, event, m[1]));
}

/**
 * The key to one RSVP: whoever holds it may change that answer. The answer's own uid (a
 * deleted and re-given answer has a new one) and its address are signed, so it opens
 * nothing else. `{rsvp uid}.{mac}`; it is given to the browser that gave the answer (a
 * cookie), to a JSON caller in the answer, and to the address in every RSVP message.
 *
 * For a protected event the key also opens the page (its holder answered with access to
 * it): a third part, `.{unlock mac}`, signs the event's code hash as it was when the key was
 * made. A new code revokes that power, as it revokes signed URLs and unlock cookies, while
 * the key still changes the answer; so does an event that stops taking RSVPs.
 */
export interface AnswerHolder {
  eventUid: string;
  rsvpUid: string;
  email: string;
}

/** The event as a key's unlocking power is signed and checked. */
export interface AnswerEvent {
  uid: string;
  access_code_hash: string | null;
  has_rsvp: boolean;
}

const answerMac = (appKey: string, a: AnswerHolder) => mac(appKey, `rsvp:${a.eventUid}:${a.rsvpUid}:${a.email.toLowerCase()}`);
const answerUnlockMac = (appKey: string, a: AnswerHolder, accessCodeHash: string) => mac(appKey, `rsvp-unlock:${a.eventUid}:${a.rsvpUid}:${accessCodeHash}`);

export function answerKey(appKey: string, a: AnswerHolder, event: AnswerEvent): string {
  const key = `${a.rsvpUid}.${answerMac(appKey, a)}`;
  return event.access_code_hash && event.has_rsvp ? `${key}.${answerUnlockMac(appKey, a, event.access_code_hash)}` : key;
}

/** `{rsvp uid}.{mac}` with an optional `.{unlock mac}`: each MAC is 43 base64url characters. */
const ANSWER_KEY = /^([A-Za-z0-9]{16})\.([A-Za-z0-9_-]{43})(?:\.([A-Za-z0-9_-]{43}))?$/;

/** True when the key is this answer's (it may change it). */
export function verifyAnswerKey(appKey: string, a: AnswerHolder, key: unknown): boolean {
  const m = typeof key === 'string' ? ANSWER_KEY.exec(key) : null;
  return m !== null && m[1] === a.rsvpUid && sameMac(m[2], answerMac(appKey, a));
}

/**
 * True when the key is this answer's and also opens its protected event now: it was made
 * under the event's current code, and the event still takes RSVPs.
 */
export function answerKeyUnlocks(appKey: string, a: AnswerHolder, event: AnswerEvent, key: unknown): boolean {
  if (!event.access_code_hash || !event.has_rsvp || !verifyAnswerKey(appKey, a, key)) return false;
  const unlock = ANSWER_KEY.exec(key as string)?.[3];
  return unlock !== undefined && sameMac(unlock, answerUnlockMac(appKey, a, event.access_code_hash));
}

/** The rsvp uid a key names (not yet verified), or null. */
export function answerKeyRsvpUid(key: unknown): string | null {
  if (typeof key !== 'string') return null;
  return ANSWER_KEY.exec(key)?.[1] ?? null;
}

/** The answer key cookie: scoped to the event, so each event keeps its own. */
export const ANSWER_COOKIE_SECONDS = 365 * 86_400;
export const answerCookieName = (eventUid: string) => `rsvp_${eventUid}`;

/**
 * The key in an invitee's Yes / Maybe / No email buttons: `i{invitee uid}.{mac}`, signing
 * the invitee, its address and the event. Like an answer key it only answers (it opens no
 * protected page), and it stops working when the invitee is removed (a re-added one has a
 * new uid). It was sent to the address alone, so it speaks for that address.
 */
interface InviteeHolder {
  eventUid: string;
  inviteeUid: string;
  email: string;
}

const inviteeAnswerMac = (appKey: string, h: InviteeHolder) => mac(appKey, `invitee-answer:${h.eventUid}:${h.inviteeUid}:${h.email.toLowerCase()}`);

export const inviteeAnswerKey = (appKey: string, h: InviteeHolder) => `i${h.inviteeUid}.${inviteeAnswerMac(appKey, h)}`;

const INVITEE_KEY = /^i([A-Za-z0-9]{16})\.([A-Za-z0-9_-]{43})$/;

/** The invitee uid an invitee key names (not yet verified), or null (also for an RSVP's answer key). */
export function inviteeKeyUid(key: unknown): string | null {
  if (typeof key !== 'string') return null;
  return INVITEE_KEY.exec(key)?.[1] ?? null;
}

export function verifyInviteeAnswerKey(appKey: string, h: InviteeHolder, key: unknown): boolean {
  const m = typeof key === 'string' ? INVITEE_KEY.exec(key) : null;
  return m !== null && m[1] === h.inviteeUid && sameMac(m[2], inviteeAnswerMac(appKey, h));
}

/**
 * One-click opt-outs (RFC 8058), in each message as List-Unsubscribe and a footer link, made
 * for one address from one event's message: `reminders` stops that event's reminders to the
 * address (`POST {base}/e/{uid}/reminders/unsubscribe?email=…&signature=…`, in reminders);
 * `all` stops all email from the event's team to it (`POST {base}/e/{uid}/unsubscribe?…`, in
 * every other message). A GET of either only shows a button that POSTs it. The signature
 * covers what is stopped, the event and the address in lower case; it does not expire, as an
 * opt-out link must keep working.
 */
export type OptOut = 'reminders' | 'all';

const OPT_OUTS: Record<OptOut, { purpose: string; path: string }> = {
  reminders: { purpose: 'reminders-off', path: 'reminders/unsubscribe' },
  all: { purpose: 'team-mail-off', path: 'unsubscribe' },
};

const optOutMac = (appKey: string, what: OptOut, eventUid: string, email: string) => mac(appKey, `${OPT_OUTS[what].purpose}:${eventUid}:${email.toLowerCase()}`);

export function unsubscribeUrl(appKey: string, baseUrl: string, what: OptOut, eventUid: string, email: string): string {
  const query = new URLSearchParams({ email: email.toLowerCase(), signature: optOutMac(appKey, what, eventUid, email) });
  return `${eventPublicUrl(baseUrl, eventUid)}/${OPT_OUTS[what].path}?${query.toString()}`;
}

/** True when the signature is this opt-out's link for this event and this address. */
export function verifyUnsubscribe(appKey: string, what: OptOut, eventUid: string, email: unknown, signature: unknown): boolean {
  if (typeof email !== 'string' || typeof signature !== 'string' || email.length > 254 || signature.length > 100) return false;
  return sameMac(signature, optOutMac(appKey, what, eventUid, email));
}
