import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Standard Webhooks: signatures older or newer than this are refused (replays, clock skew). */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

const keyOf = (secret: string) => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, as a sender computes it. */
export function signPayload(secret: string, id: string, timestamp: number, body: Buffer | string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * Verifies a Standard Webhooks request against any of the given secrets (the current one
 * and, for a day after a rotation, the previous one): the three headers present, the
 * timestamp within the tolerance, and one of the `v1,` signatures equal in constant time.
 * Signatures are compared as the base64 text itself (as the reference libraries do): decoded
 * bytes would let other texts pass for the same signature (no padding, bytes after it). Both
 * sides are the same length or the comparison stops at once, which tells only that length,
 * and it is public (44 characters).
 */
export function verifyWebhook(headers: IncomingHttpHeaders, body: Buffer, secrets: string[], nowMs: number): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d{1,12}$/.test(timestamp) || id.length > 256 || signatures.length > 2048) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return false;
  const offered = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3)));
  for (const secret of secrets) {
    const expected = Buffer.from(signPayload(secret, id, Number(timestamp), body).slice(3));
    if (offered.some((o) => o.length === expected.length && timingSafeEqual(o, expected))) return true;
  }
  return false;
}
