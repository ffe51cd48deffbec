import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { randomBase62 } from '../../../shared/ids/ids';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Webhook signing secrets (Standard Webhooks: `whsec_` + base64 of 24 random bytes). They
 * are needed in plain to verify signatures, so they are stored sealed with AES-256-GCM
 * under a key derived from APP_KEY rather than hashed.
 */
export const newSigningSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

const sealKey = (appKey: string) => createHash('sha256').update(`smart-link-secrets:${appKey}`).digest();

export function sealSecret(appKey: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(appKey), iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

export function openSecret(appKey: string, sealed: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1') throw new Error('unknown sealed secret version');
  const decipher = createDecipheriv('aes-256-gcm', sealKey(appKey), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

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
