import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62, sha256Hex } from '../ids/ids';

export type TokenKind = 'api' | 'extension';

/**
 * Bearer tokens: 40 random base62 characters (~238 bits) behind a kind prefix. Only the
 * SHA-256 is stored; a high-entropy secret needs no slow hash, and lookup by hash keeps
 * the secret out of any comparison that could leak timing.
 */
export function generateToken(kind: TokenKind): { token: string; hash: string } {
  const token = `${kind === 'api' ? 'cst' : 'csx'}_${randomBase62(40)}`;
  return { token, hash: sha256Hex(token) };
}

export const hashToken = (token: string): string => sha256Hex(token);

/** Constant-time equality of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Constant-time equality of two strings of any length (their SHA-256 digests are compared). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
