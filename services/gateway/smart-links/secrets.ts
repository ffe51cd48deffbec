import { createHmac } from 'node:crypto';
import { randomBase62 } from '../../../shared/ids/ids';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Smart-link keys go in public form actions: 24 base62 characters (~143 bits). */
export const newSmartLinkKey = () => randomBase62(24);

/**
 * A 16-character base62 id derived from a secret (APP_KEY) and a message: stable for the
 * same message, unguessable without the key. Used for event identities of identical
 * submissions and for submission ids of repeated deliveries.
 */
export function derivedUid(appKey: string, message: string): string {
  const digest = createHmac('sha256', appKey).update(message).digest();
  // The first 128 bits, read big-endian, written in 16 base62 digits, least significant
  // first (62^16 < 2^128). Long division over four 32-bit limbs: no BigInt on this path.
  const limbs = [digest.readUInt32BE(0), digest.readUInt32BE(4), digest.readUInt32BE(8), digest.readUInt32BE(12)];
  let out = '';
  for (let i = 0; i < 16; i++) {
    let rest = 0;
    for (let j = 0; j < 4; j++) {
      const value = rest * 0x1_0000_0000 + limbs[j]; // < 62 * 2^32: exact in a double
      limbs[j] = Math.floor(value / 62);
      rest = value % 62;
    }
    out += BASE62[rest];
  }
  return out;
}
