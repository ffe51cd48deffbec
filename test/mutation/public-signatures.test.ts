import {
  ANSWER_COOKIE_SECONDS,
  answerCookieName,
  answerKey,
  answerKeyRsvpUid,
  answerKeyUnlocks,
  signedEventUrl,
  UNLOCK_COOKIE_SECONDS,
  unlockCookieName,
  unlockCookieValue,
  verifyAnswerKey,
  verifyEventAccess,
  verifyUnlockCookie,
} from '../../shared/links/signatures';

const KEY = 'app-key-for-tests';
const EVENT = { uid: 'uid1', access_code_hash: 'hash1' };
const EXPIRES = 1800000000;
const NOW = (EXPIRES - 60) * 1000;

/**
 * Computed once, outside the code under test:
 *   printf %s 'event:uid1:1800000000:hash1' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 *   (hex: 6890e7e09a334e3c72a03f23f0e7eb6c52fa13a4704d48bf9be45eae4ddca482)
 *   printf %s 'unlock:uid1:1800000000:hash1' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 */
const SIGNATURE = 'aJDn4JozTjxyoD8j8OfrbFL6E6RwTUi_m-Rerk3cpII';
const UNLOCK_MAC = 'nTw1KOQQABeF5VGaw8p-l5AbUc3Fhe_RQO9auLyrg5Y';

describe('signed URLs', () => {
  it('signs the OpenSSL-computed HMAC into the URL', () => {
    expect(signedEventUrl(KEY, 'https://cal.example', EVENT, EXPIRES)).toBe(`https://cal.example/e/uid1?expires=${EXPIRES}&signature=${SIGNATURE}`);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), SIGNATURE, NOW)).toBe(true);
  });

  it('refuses another key, event, code, expiry or signature', () => {
    expect(verifyEventAccess('other-key', EVENT, String(EXPIRES), SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, { ...EVENT, uid: 'uid2' }, String(EXPIRES), SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, { ...EVENT, access_code_hash: 'hash2' }, String(EXPIRES), SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES + 1), SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), `${SIGNATURE.slice(0, -1)}J`, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), SIGNATURE.slice(0, -1), NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), `${SIGNATURE}A`, NOW)).toBe(false);
  });

  it('takes expires only in canonical form, anchored at both ends', () => {
    const signed = (expires: string) => verifyEventAccess(KEY, EVENT, expires, SIGNATURE, NOW);
    expect(signed(`${EXPIRES}abc`)).toBe(false);
    expect(signed(`abc${EXPIRES}`)).toBe(false);
    expect(signed(`0${EXPIRES}`)).toBe(false);
    expect(signed(`+${EXPIRES}`)).toBe(false);
    expect(signed(`${EXPIRES}.0`)).toBe(false);
    expect(signed(` ${EXPIRES}`)).toBe(false);
    // 12 digits are taken, 13 are not, whatever the signature.
    const far = '999999999999';
    const sig = new URL(signedEventUrl(KEY, 'https://h', EVENT, Number(far))).searchParams.get('signature');
    expect(verifyEventAccess(KEY, EVENT, far, sig, NOW)).toBe(true);
    const farther = '1000000000000';
    const sig13 = new URL(signedEventUrl(KEY, 'https://h', EVENT, Number(farther))).searchParams.get('signature');
    expect(verifyEventAccess(KEY, EVENT, farther, sig13, NOW)).toBe(false);
  });

  it('refuses non-strings and signatures over 100 characters', () => {
    expect(verifyEventAccess(KEY, EVENT, EXPIRES, SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), [SIGNATURE], NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, undefined, SIGNATURE, NOW)).toBe(false);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), `${SIGNATURE}${'A'.repeat(58)}`, NOW)).toBe(false);
  });

  it('expires at the second it names', () => {
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), SIGNATURE, EXPIRES * 1000 - 1)).toBe(true);
    expect(verifyEventAccess(KEY, EVENT, String(EXPIRES), SIGNATURE, EXPIRES * 1000)).toBe(false);
  });
});

describe('unlock cookies', () => {
  const nowAt = (EXPIRES - UNLOCK_COOKIE_SECONDS) * 1000;

  it('is "{expires}.{OpenSSL-computed HMAC}", 12 hours on', () => {
    expect(UNLOCK_COOKIE_SECONDS).toBe(43200);
    expect(unlockCookieName('uid1')).toBe('unlock_uid1');
    expect(unlockCookieValue(KEY, EVENT, nowAt)).toBe(`${EXPIRES}.${UNLOCK_MAC}`);
    expect(unlockCookieValue(KEY, EVENT, nowAt + 999)).toBe(`${EXPIRES}.${UNLOCK_MAC}`);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC}`, nowAt)).toBe(true);
  });

  it('refuses another key, event, code, expiry, a cut or lengthened MAC, and a signed-URL MAC', () => {
    const value = `${EXPIRES}.${UNLOCK_MAC}`;
    expect(verifyUnlockCookie('other', EVENT, value, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, { ...EVENT, uid: 'uid2' }, value, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, { ...EVENT, access_code_hash: 'hash2' }, value, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES + 1}.${UNLOCK_MAC}`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC.slice(0, -1)}`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC}A`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${SIGNATURE}`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, undefined, nowAt)).toBe(false);
  });

  it('is anchored at both ends and expires at the second it names', () => {
    expect(verifyUnlockCookie(KEY, EVENT, `x${EXPIRES}.${UNLOCK_MAC}`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC}.`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `0${EXPIRES}.${UNLOCK_MAC}`, nowAt)).toBe(false);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC}`, EXPIRES * 1000 - 1)).toBe(true);
    expect(verifyUnlockCookie(KEY, EVENT, `${EXPIRES}.${UNLOCK_MAC}`, EXPIRES * 1000)).toBe(false);
  });
});

describe('RSVP answer keys', () => {
  const holder = { eventUid: 'evtA', rsvpUid: 'Rsvp000000000001', email: 'Ann@Example.com' };
  const open = { uid: 'evtA', access_code_hash: null, has_rsvp: true };
  const locked = { uid: 'evtA', access_code_hash: 'codehash1', has_rsvp: true };

  it('is "{rsvp uid}.{mac}" for an open event, with an unlock part for a protected one', () => {
    expect(answerKey(KEY, holder, open)).toMatch(/^Rsvp000000000001\.[\w-]{43}$/);
    expect(answerKey(KEY, holder, locked)).toMatch(/^Rsvp000000000001\.[\w-]{43}\.[\w-]{43}$/);
    expect(answerKey(KEY, holder, { ...locked, has_rsvp: false })).toBe(answerKey(KEY, holder, open));
    expect(answerKey(KEY, holder, locked).startsWith(`${answerKey(KEY, holder, open)}.`)).toBe(true);
    expect(answerCookieName('evtA')).toBe('rsvp_evtA');
    expect(ANSWER_COOKIE_SECONDS).toBe(365 * 86_400);
  });

  it("opens its own answer (address in any case), never another RSVP's, another event's or another address's", () => {
    for (const key of [answerKey(KEY, holder, open), answerKey(KEY, holder, locked)]) {
      expect(verifyAnswerKey(KEY, holder, key)).toBe(true);
      expect(verifyAnswerKey(KEY, { ...holder, email: 'ann@example.com' }, key)).toBe(true);
      expect(verifyAnswerKey(KEY, { ...holder, rsvpUid: 'Rsvp000000000002' }, key)).toBe(false);
      expect(verifyAnswerKey(KEY, { ...holder, eventUid: 'evtB' }, key)).toBe(false);
      expect(verifyAnswerKey(KEY, { ...holder, email: 'bob@example.com' }, key)).toBe(false);
      expect(verifyAnswerKey('other', holder, key)).toBe(false);
    }
    const other = { ...holder, rsvpUid: 'Rsvp000000000002' };
    // Another RSVP's key, with or without its uid swapped for ours, opens nothing of ours.
    const theirs = answerKey(KEY, other, open);
    expect(verifyAnswerKey(KEY, holder, theirs)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, theirs.replace(other.rsvpUid, holder.rsvpUid))).toBe(false);
  });

  it('refuses malformed keys: not a string, wrong lengths, extra text at either end', () => {
    const key = answerKey(KEY, holder, locked);
    expect(verifyAnswerKey(KEY, holder, undefined)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, 42)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, `x${key}`)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, `${key}x`)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, `${key}.`)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, key.slice(0, -1))).toBe(false);
    const [, mac] = key.split('.');
    expect(verifyAnswerKey(KEY, holder, `${holder.rsvpUid}.${mac.slice(0, -1)}`)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, `${holder.rsvpUid}.${mac}A`)).toBe(false);
  });

  it('unlocks the protected event only under the code it was made with, and while it takes RSVPs', () => {
    const key = answerKey(KEY, holder, locked);
    expect(answerKeyUnlocks(KEY, holder, locked, key)).toBe(true);
    // The access code changed: the key still changes the answer but opens the page no more.
    const recoded = { ...locked, access_code_hash: 'codehash2' };
    expect(answerKeyUnlocks(KEY, holder, recoded, key)).toBe(false);
    expect(verifyAnswerKey(KEY, holder, key)).toBe(true);
    expect(answerKeyUnlocks(KEY, holder, recoded, answerKey(KEY, holder, recoded))).toBe(true);
    expect(answerKeyUnlocks(KEY, holder, { ...locked, has_rsvp: false }, key)).toBe(false);
    expect(answerKeyUnlocks(KEY, holder, open, key)).toBe(false);
    // A key made while the event was open has no unlock part.
    expect(answerKeyUnlocks(KEY, holder, locked, answerKey(KEY, holder, open))).toBe(false);
    // Another RSVP's or another event's unlocking key opens nothing for this one.
    const other = { ...holder, rsvpUid: 'Rsvp000000000002' };
    expect(answerKeyUnlocks(KEY, other, locked, key)).toBe(false);
    const otherKey = answerKey(KEY, other, locked);
    const spliced = `${key.split('.').slice(0, 2).join('.')}.${otherKey.split('.')[2]}`;
    expect(answerKeyUnlocks(KEY, holder, locked, spliced)).toBe(false);
    const elsewhere = { ...holder, eventUid: 'evtB' };
    const keyB = answerKey(KEY, elsewhere, { ...locked, uid: 'evtB' });
    const splicedB = `${key.split('.').slice(0, 2).join('.')}.${keyB.split('.')[2]}`;
    expect(answerKeyUnlocks(KEY, holder, locked, splicedB)).toBe(false);
    expect(answerKeyUnlocks(KEY, holder, locked, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(answerKeyUnlocks(KEY, holder, locked, undefined)).toBe(false);
  });

  it('names the rsvp uid of a well-formed key only', () => {
    expect(answerKeyRsvpUid(answerKey(KEY, holder, open))).toBe(holder.rsvpUid);
    expect(answerKeyRsvpUid(answerKey(KEY, holder, locked))).toBe(holder.rsvpUid);
    expect(answerKeyRsvpUid('Rsvp000000000001.short')).toBeNull();
    expect(answerKeyRsvpUid(7)).toBeNull();
    expect(answerKeyRsvpUid(null)).toBeNull();
  });
});
