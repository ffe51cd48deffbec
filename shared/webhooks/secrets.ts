import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Signing secrets of Standard Webhooks (`whsec_` + base64 of 24 random bytes): those smart
 * links verify incoming requests with, and those outbound webhooks sign with. They are
 * needed in plain, so they are stored sealed with AES-256-GCM under a key derived from
 * APP_KEY rather than hashed. (The derivation's label names smart links, which shipped it
 * first: changing it would make every stored secret unreadable.)
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
