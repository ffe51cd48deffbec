import { createHash, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// CSPRNG bytes drawn 4 KiB at a time: one call to the generator serves ~100 ids (new ids are
// made on the hottest path, one per submission). Each byte is used once.
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++];
}

/** Random base62 string; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62]; // 248 = 4 * 62: no modulo bias
  }
  return out;
}

/** Public, unguessable identifier: 16 base62 characters, about 95 bits. */
export const UID_LENGTH = 16;
export const UID_PATTERN = /^[0-9A-Za-z]{16}$/;
export const newUid = (): string => randomBase62(UID_LENGTH);

export type IdPrefix = 'cal_' | 'evt_' | 'sl_' | 'sls_' | 'ext_' | 'inv_' | 'rsvp_' | 'sub_' | 'dk_' | 'team_' | 'usr_' | 'wh_' | 'whd_' | 'tok_';

export const publicId = (prefix: IdPrefix, uid: string): string => prefix + uid;

/** The uid inside a public id, or null when the value is not of that kind. */
export function uidFromPublicId(prefix: IdPrefix, value: string): string | null {
  if (!value.startsWith(prefix)) return null;
  const uid = value.slice(prefix.length);
  return UID_PATTERN.test(uid) ? uid : null;
}

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
