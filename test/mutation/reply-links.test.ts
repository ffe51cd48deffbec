import { parseReplyAddress, replyAddress, verifyReplyToken } from '../../shared/invites/reply-address';
import { answerKey, inviteeAnswerKey, inviteeKeyUid, unsubscribeUrl, verifyAnswerKey, verifyInviteeAnswerKey, verifyUnsubscribe } from '../../shared/links/signatures';

/**
 * The links that speak for one person of one event: an invitee's reply address (their
 * calendar app's answers come back to it), the key of their email's answer buttons, and
 * a reminder's unsubscribe link. Vectors computed once, outside the code under test:
 *   printf %s 'reply:42:Inv000000000000A:Evt000000000000B' | openssl dgst -sha256 -hmac 'app-key-for-tests'
 *     → b1774a9b3dd4fd4efbe5765169baed2e98eb747e269923484a760e71a57fc9db (the address keeps 32 hex digits)
 *   printf %s 'invitee-answer:Evt000000000000B:Inv000000000000A:ann@example.com' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 *   printf %s 'reminders-off:Evt000000000000B:ann@example.com' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 *   printf %s 'team-mail-off:Evt000000000000B:ann@example.com' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 */
const KEY = 'app-key-for-tests';
const DOMAIN = 'replies.example.com';
const HOLDER = { inviteeId: 42, inviteeUid: 'Inv000000000000A', eventUid: 'Evt000000000000B' };
const REPLY_MAC = 'b1774a9b3dd4fd4efbe5765169baed2e';
const ADDRESS = `reply+16-${REPLY_MAC}@${DOMAIN}`; // 42 in base 36 is 16
const INVITEE_MAC = 'LnLAMTd2vtec-hTApPnNir1OOy2esiH6g3llpLbbBbM';
const OPT_OUT_MAC = 'ZUPl9xgPwP-Hw5AS2tBmkUL8KrGx0LAjg18soJUf3sQ';
const ALL_MAIL_OPT_OUT_MAC = 'mtrp1xgN59tlWYTTBRR6rqmZKXVxlcq7wLoJbAbNtCc';

describe('reply addresses', () => {
  it('are reply+<id in base 36>-<first 128 bits of the HMAC, hex>@<domain>', () => {
    expect(replyAddress(KEY, DOMAIN, HOLDER)).toBe(ADDRESS);
  });

  it('read back in any letter case, with surrounding space, to the id and MAC', () => {
    expect(parseReplyAddress(ADDRESS, DOMAIN)).toEqual({ inviteeId: 42, mac: REPLY_MAC });
    expect(parseReplyAddress(` ${ADDRESS.toUpperCase()} `, DOMAIN.toUpperCase())).toEqual({ inviteeId: 42, mac: REPLY_MAC });
    expect(parseReplyAddress(`reply+zz-${REPLY_MAC}@${DOMAIN}`, DOMAIN)).toEqual({ inviteeId: 35 * 36 + 35, mac: REPLY_MAC });
    expect(parseReplyAddress(`reply+${'z'.repeat(10)}-${REPLY_MAC}@${DOMAIN}`, DOMAIN)?.inviteeId).toBe(36 ** 10 - 1);
    // The largest id that fits (2^53 - 1 is 2gosa7pa2gv in base 36), and the digits at each end of the range.
    expect(parseReplyAddress(`reply+2gosa7pa2gv-${REPLY_MAC}@${DOMAIN}`, DOMAIN)?.inviteeId).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseReplyAddress(`reply+09az-${'0123456789abcdef'.repeat(2)}@${DOMAIN}`, DOMAIN)).toEqual({ inviteeId: 9 * 36 * 36 + 10 * 36 + 35, mac: '0123456789abcdef'.repeat(2) });
  });

  it.each([
    ['another domain', `reply+16-${REPLY_MAC}@other.example.com`],
    ['a subdomain of it', `reply+16-${REPLY_MAC}@x.${DOMAIN}`],
    ['no @', `reply+16-${REPLY_MAC}`],
    ['another prefix', `replyx16-${REPLY_MAC}@${DOMAIN}`],
    ['no prefix', `16-${REPLY_MAC}@${DOMAIN}`],
    ['no dash', `reply+16${REPLY_MAC}@${DOMAIN}`],
    ['an empty id', `reply+-${REPLY_MAC}@${DOMAIN}`],
    ['id 0', `reply+0-${REPLY_MAC}@${DOMAIN}`],
    ['an id with a character outside base 36', `reply+1_-${REPLY_MAC}@${DOMAIN}`],
    ['an id of 12 digits', `reply+${'1'.repeat(12)}-${REPLY_MAC}@${DOMAIN}`],
    ['an id of 11 digits past 2^53', `reply+${'z'.repeat(11)}-${REPLY_MAC}@${DOMAIN}`],
    ['an id with a character just below 0', `reply+1/-${REPLY_MAC}@${DOMAIN}`],
    ['an id with a character just above 9', `reply+1:-${REPLY_MAC}@${DOMAIN}`],
    ['an id with a character just above z', `reply+1{-${REPLY_MAC}@${DOMAIN}`],
    ['a MAC with a character just above f', `reply+16-${REPLY_MAC.slice(1)}g@${DOMAIN}`],
    ['a MAC with a character just above 9', `reply+16-${REPLY_MAC.slice(1)}:@${DOMAIN}`],
    ['something before the prefix', `xreply+16-${REPLY_MAC}@${DOMAIN}`],
    ['two ids', `reply+16-16-${REPLY_MAC}@${DOMAIN}`],
    ['a line break and more after the domain', `${ADDRESS}\nRCPT TO:<someone@elsewhere.example>`],
    ['a MAC one digit short', `reply+16-${REPLY_MAC.slice(1)}@${DOMAIN}`],
    ['a MAC one digit long', `reply+16-${REPLY_MAC}0@${DOMAIN}`],
    ['a MAC with a letter outside hex', `reply+16-${REPLY_MAC.slice(1)}g@${DOMAIN}`],
    ['a MAC in base64', `reply+16-${'A'.repeat(31)}/@${DOMAIN}`],
  ])('refuse %s', (_what, address) => {
    expect(parseReplyAddress(address, DOMAIN)).toBeNull();
  });

  it('verify for their invitee of their event only', () => {
    const token = parseReplyAddress(ADDRESS, DOMAIN) as { inviteeId: number; mac: string };
    expect(verifyReplyToken(KEY, token, HOLDER)).toBe(true);
    expect(verifyReplyToken(KEY, token, { ...HOLDER, inviteeUid: 'Inv000000000000C' })).toBe(false);
    expect(verifyReplyToken(KEY, token, { ...HOLDER, eventUid: 'Evt000000000000C' })).toBe(false);
    expect(verifyReplyToken(KEY, { ...token, inviteeId: 43 }, HOLDER)).toBe(false);
    expect(verifyReplyToken('another-app-key', token, HOLDER)).toBe(false);
    expect(verifyReplyToken(KEY, { ...token, mac: `${REPLY_MAC.slice(0, -1)}5` }, HOLDER)).toBe(false);
    expect(verifyReplyToken(KEY, { ...token, mac: REPLY_MAC.slice(0, -1) }, HOLDER)).toBe(false);
  });
});

describe("invitees' answer keys", () => {
  const invitee = { eventUid: 'Evt000000000000B', inviteeUid: 'Inv000000000000A', email: 'Ann@Example.com' };
  const key = `iInv000000000000A.${INVITEE_MAC}`;

  it('are i<invitee uid>.<HMAC of the event, the invitee and the address in lower case>', () => {
    expect(inviteeAnswerKey(KEY, invitee)).toBe(key);
    expect(inviteeAnswerKey(KEY, { ...invitee, email: 'ann@example.com' })).toBe(key);
  });

  it('name their invitee, and nothing for other shapes (an RSVP key among them)', () => {
    expect(inviteeKeyUid(key)).toBe('Inv000000000000A');
    expect(inviteeKeyUid(`Inv000000000000A.${INVITEE_MAC}`)).toBeNull();
    expect(inviteeKeyUid(`iInv000000000000A.${INVITEE_MAC}.${INVITEE_MAC}`)).toBeNull();
    expect(inviteeKeyUid(`xiInv000000000000A.${INVITEE_MAC}`)).toBeNull();
    expect(inviteeKeyUid(`iInv00000000000A.${INVITEE_MAC}`)).toBeNull();
    expect(inviteeKeyUid(`iInv000000000000A.${INVITEE_MAC.slice(1)}`)).toBeNull();
    expect(inviteeKeyUid(42)).toBeNull();
  });

  it('verify for their invitee, event and address only', () => {
    expect(verifyInviteeAnswerKey(KEY, invitee, key)).toBe(true);
    expect(verifyInviteeAnswerKey(KEY, { ...invitee, email: 'ANN@example.com' }, key)).toBe(true);
    expect(verifyInviteeAnswerKey(KEY, { ...invitee, email: 'bob@example.com' }, key)).toBe(false);
    expect(verifyInviteeAnswerKey(KEY, { ...invitee, eventUid: 'Evt000000000000C' }, key)).toBe(false);
    expect(verifyInviteeAnswerKey(KEY, { ...invitee, inviteeUid: 'Inv000000000000C' }, key)).toBe(false);
    expect(verifyInviteeAnswerKey(KEY, invitee, `iInv000000000000A.${INVITEE_MAC.slice(0, -1)}A`)).toBe(false);
    expect(verifyInviteeAnswerKey(KEY, invitee, undefined)).toBe(false);
    // Ann's MAC under another invitee's uid opens nothing, not even Ann's answer.
    expect(verifyInviteeAnswerKey(KEY, invitee, `iInv000000000000C.${INVITEE_MAC}`)).toBe(false);
    expect(verifyInviteeAnswerKey('another-app-key', invitee, key)).toBe(false);
  });
});

describe("reminders' unsubscribe links", () => {
  it('sign the event and the address in lower case', () => {
    expect(unsubscribeUrl(KEY, 'https://cal.example', 'reminders', 'Evt000000000000B', 'Ann@Example.com')).toBe(
      `https://cal.example/e/Evt000000000000B/reminders/unsubscribe?email=ann%40example.com&signature=${OPT_OUT_MAC}`,
    );
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ann@example.com', OPT_OUT_MAC)).toBe(true);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ANN@example.com', OPT_OUT_MAC)).toBe(true);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000C', 'ann@example.com', OPT_OUT_MAC)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'bob@example.com', OPT_OUT_MAC)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ann@example.com', `${OPT_OUT_MAC.slice(0, -1)}A`)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'a'.repeat(255), OPT_OUT_MAC)).toBe(false);
    // An address is at most 254 characters (RFC 5321): a link signed for a longer one is refused.
    const signed = (email: string) => new URL(unsubscribeUrl(KEY, 'https://cal.example', 'reminders', 'Evt000000000000B', email)).searchParams.get('signature');
    const longest = `${'a'.repeat(242)}@example.com`;
    expect(longest).toHaveLength(254);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', longest, signed(longest))).toBe(true);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', `a${longest}`, signed(`a${longest}`))).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ann@example.com', 'x'.repeat(101))).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', undefined, OPT_OUT_MAC)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ann@example.com', undefined)).toBe(false);
  });
});

describe("a team's unsubscribe links", () => {
  it('sign what they stop, the event and the address: a reminders link stops no more than reminders', () => {
    expect(unsubscribeUrl(KEY, 'https://cal.example', 'all', 'Evt000000000000B', 'Ann@Example.com')).toBe(
      `https://cal.example/e/Evt000000000000B/unsubscribe?email=ann%40example.com&signature=${ALL_MAIL_OPT_OUT_MAC}`,
    );
    expect(verifyUnsubscribe(KEY, 'all', 'Evt000000000000B', 'ANN@example.com', ALL_MAIL_OPT_OUT_MAC)).toBe(true);
    expect(verifyUnsubscribe(KEY, 'all', 'Evt000000000000B', 'ann@example.com', OPT_OUT_MAC)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'reminders', 'Evt000000000000B', 'ann@example.com', ALL_MAIL_OPT_OUT_MAC)).toBe(false);
    expect(verifyUnsubscribe(KEY, 'all', 'Evt000000000000C', 'ann@example.com', ALL_MAIL_OPT_OUT_MAC)).toBe(false);
  });
});

describe("RSVP answer keys under another answer's uid", () => {
  it('open nothing, not even the answer whose MAC they carry', () => {
    const holder = { eventUid: 'Evt000000000000B', rsvpUid: 'Rsv000000000000A', email: 'ann@example.com' };
    const key = answerKey(KEY, holder, { uid: 'Evt000000000000B', access_code_hash: null, has_rsvp: true });
    expect(verifyAnswerKey(KEY, holder, key)).toBe(true);
    expect(verifyAnswerKey(KEY, holder, `Rsv000000000000C${key.slice(16)}`)).toBe(false);
  });
});
