import { derivedUid, newSmartLinkKey } from '../../services/gateway/smart-links/secrets';

/**
 * Ids derived from content on purpose, for deduplication: a smart-link submission's id from
 * its link and delivery key, an event's identity from identical submissions. Each is the
 * first 128 bits of HMAC-SHA256(APP_KEY, message), big-endian, written as 16 base62 digits
 * (0-9, A-Z, a-z), least significant first. The expected values were computed outside our
 * code, in Python:
 *
 *   n = int.from_bytes(hmac.new(key, msg, hashlib.sha256).digest()[:16], 'big')
 *   ''.join(B[(n // 62**i) % 62] for i in range(16))
 */
const KEY = 'app-key-for-tests';

describe('derived ids', () => {
  it('are the HMAC of the message under the key, in 16 base62 digits', () => {
    expect(derivedUid(KEY, 'sls:LinkUid00000000A:delivery-42')).toBe('6Mk22egAsITTpsi0');
    expect(derivedUid(KEY, 'evt:abc')).toBe('siNjItHDg92hXfvs');
    expect(derivedUid(KEY, '')).toBe('NNpSX7fmO6gWDjRM');
  });

  it('differ with the key: another deployment cannot collide with ours', () => {
    expect(derivedUid('another-key', 'evt:abc')).toBe('e0uUiQGjR8ZcPqMg');
  });

  it('smart-link keys are 24 random base62 characters', () => {
    const keys = new Set(Array.from({ length: 50 }, () => newSmartLinkKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(/^[0-9A-Za-z]{24}$/);
  });
});
