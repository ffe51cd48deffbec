import { Webhook } from 'standardwebhooks';
import { SIGNATURE_TOLERANCE_SECONDS, signPayload, verifyWebhook } from '../../shared/webhooks/signature';

/**
 * Standard Webhooks known answers: the vector the reference JavaScript library tests against
 * (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts, "sign
 * function works"), and the reference library itself (npm `standardwebhooks`) signing and
 * verifying against our code.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const EXPECTED = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const NOW = TIMESTAMP * 1000;

const headers = (over: Record<string, string | string[] | undefined> = {}) => ({
  'webhook-id': MSG_ID,
  'webhook-timestamp': String(TIMESTAMP),
  'webhook-signature': EXPECTED,
  ...over,
});
const verify = (over: Record<string, string | string[] | undefined> = {}, opts: { body?: string; secrets?: string[]; now?: number } = {}) =>
  verifyWebhook(headers(over), Buffer.from(opts.body ?? BODY), opts.secrets ?? [SECRET], opts.now ?? NOW);

describe('Standard Webhooks known answer', () => {
  it('signs the published vector to the published signature, with and without the whsec_ prefix', () => {
    expect(signPayload(SECRET, MSG_ID, TIMESTAMP, BODY)).toBe(EXPECTED);
    expect(signPayload(SECRET.slice(6), MSG_ID, TIMESTAMP, BODY)).toBe(EXPECTED);
    expect(signPayload(SECRET, MSG_ID, TIMESTAMP, Buffer.from(BODY))).toBe(EXPECTED);
  });

  it('accepts the published vector', () => {
    expect(verify()).toBe(true);
  });

  it('agrees with the reference library both ways', () => {
    const wh = new Webhook(SECRET);
    expect(wh.sign(MSG_ID, new Date(NOW), BODY)).toBe(EXPECTED);
    const now = Date.now();
    const ts = Math.floor(now / 1000);
    const theirs = wh.sign('msg_2', new Date(ts * 1000), 'body ü');
    expect(verifyWebhook({ 'webhook-id': 'msg_2', 'webhook-timestamp': String(ts), 'webhook-signature': theirs }, Buffer.from('body ü'), [SECRET], now)).toBe(true);
    const ours = signPayload(SECRET, 'msg_3', ts, '{"other":1}');
    expect(wh.verify('{"other":1}', { 'webhook-id': 'msg_3', 'webhook-timestamp': String(ts), 'webhook-signature': ours })).toEqual({ other: 1 });
  });

  it('refuses the vector with any signed part changed', () => {
    expect(verify({ 'webhook-id': `${MSG_ID}x` })).toBe(false);
    expect(verify({}, { body: `${BODY} ` })).toBe(false);
    expect(verify({ 'webhook-timestamp': String(TIMESTAMP + 1) })).toBe(false);
    expect(verify({}, { secrets: ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'] })).toBe(false);
  });

  it('takes any of the secrets (rotation), and a v1 signature among others in the header', () => {
    expect(verify({}, { secrets: ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', SECRET] })).toBe(true);
    expect(verify({ 'webhook-signature': `v2,${EXPECTED.slice(3)} v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${EXPECTED}` })).toBe(true);
    expect(verify({}, { secrets: [] })).toBe(false);
  });

  it('compares the base64 text itself: other versions, padding and extra bytes do not pass', () => {
    expect(verify({ 'webhook-signature': `v2,${EXPECTED.slice(3)}` })).toBe(false);
    expect(verify({ 'webhook-signature': EXPECTED.slice(3) })).toBe(false);
    expect(verify({ 'webhook-signature': EXPECTED.replace(/=$/, '') })).toBe(false);
    expect(verify({ 'webhook-signature': `${EXPECTED}AA` })).toBe(false);
    expect(verify({ 'webhook-signature': `xv1,${EXPECTED.slice(3)}` })).toBe(false);
    expect(verify({ 'webhook-signature': 'v1,' })).toBe(false);
  });

  it('needs all three headers as single strings', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(verify({ [name]: undefined })).toBe(false);
      expect(verify({ [name]: [headers()[name as 'webhook-id']] })).toBe(false);
    }
  });

  it('holds the tolerance at its edge, both ways: 300 s passes, 301 s fails', () => {
    expect(SIGNATURE_TOLERANCE_SECONDS).toBe(300);
    expect(verify({}, { now: NOW + 300_000 })).toBe(true);
    expect(verify({}, { now: NOW - 300_000 })).toBe(true);
    expect(verify({}, { now: NOW + 300_001 })).toBe(false);
    expect(verify({}, { now: NOW - 300_001 })).toBe(false);
    expect(verify({}, { now: NOW + 301_000 })).toBe(false);
    expect(verify({}, { now: NOW - 301_000 })).toBe(false);
  });

  it('takes timestamps of 1 to 12 digits only', () => {
    const at = (ts: string, now: number) => verifyWebhook(headers({ 'webhook-timestamp': ts, 'webhook-signature': signPayload(SECRET, MSG_ID, Number(ts), BODY) }), Buffer.from(BODY), [SECRET], now);
    expect(at('5', 5000)).toBe(true);
    expect(at('999999999999', 999999999999000)).toBe(true);
    expect(at('1000000000000', 1000000000000000)).toBe(false);
    expect(at(`${TIMESTAMP}x`, NOW)).toBe(false);
    expect(at(`x${TIMESTAMP}`, NOW)).toBe(false);
    expect(at('', 0)).toBe(false);
    expect(at(`-${TIMESTAMP}`, NOW)).toBe(false);
  });

  it('caps the id at 256 characters and the signature header at 2048', () => {
    const signedId = (id: string) => verify({ 'webhook-id': id, 'webhook-signature': signPayload(SECRET, id, TIMESTAMP, BODY) });
    expect(signedId('i'.repeat(256))).toBe(true);
    expect(signedId('i'.repeat(257))).toBe(false);
    const padded = (n: number) => `${'v0,x '.repeat(Math.ceil(n / 5))}`.slice(0, n - EXPECTED.length - 1);
    const sig2048 = `${padded(2048)} ${EXPECTED}`;
    expect(sig2048).toHaveLength(2048);
    expect(verify({ 'webhook-signature': sig2048 })).toBe(true);
    expect(verify({ 'webhook-signature': ` ${sig2048}` })).toBe(false);
  });
});
