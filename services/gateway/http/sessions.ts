import { createHmac } from 'node:crypto';
import type { Knex } from '../../../shared/db/knex';
import { newUid, randomBase62, sha256Hex } from '../../../shared/ids/ids';

/**
 * Dashboard sessions. The browser holds a random secret in an HttpOnly cookie; the database
 * holds only its SHA-256, so a read of the table signs nobody in. A session ends when it is
 * signed out, when its user signs out everywhere or is removed, after SESSION_IDLE_MS
 * without a request, and at the latest SESSION_MAX_MS after sign-in. A new session is made
 * at every sign-in, never taken over from a cookie the browser already had (no fixation).
 */
export const SESSION_IDLE_MS = 14 * 86_400_000;
export const SESSION_MAX_MS = 30 * 86_400_000;

/** `css_` and 40 base62 characters (~238 bits). */
export const SESSION_SECRET = /^css_[0-9A-Za-z]{40}$/;

export async function createSession(db: Knex, input: { userId: number; teamId: number; userAgent?: string }, now: Date): Promise<{ secret: string; uid: string; expiresAt: Date }> {
  const secret = `css_${randomBase62(40)}`;
  const uid = newUid();
  const expiresAt = new Date(now.getTime() + SESSION_MAX_MS);
  await db('sessions').insert({
    uid,
    user_id: input.userId,
    team_id: input.teamId,
    secret_hash: sha256Hex(secret),
    user_agent: input.userAgent ? input.userAgent.slice(0, 255) : null,
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
  });
  await db('users').where({ id: input.userId }).update({ last_sign_in_at: now });
  return { secret, uid, expiresAt };
}

/**
 * The CSRF token of a session: an HMAC of its secret under APP_KEY. The dashboard reads it
 * from GET /api/session and sends it as X-CSRF-Token on every request that changes
 * something; a page on another site can make the browser send the cookie, but can neither
 * read this token nor set a custom header on a cross-site form.
 */
export const csrfTokenOf = (appKey: string, secret: string): string => createHmac('sha256', appKey).update(`csrf:${secret}`).digest('base64url');

export async function touchSession(db: Knex, id: number, now: Date): Promise<void> {
  await db('sessions').where({ id }).update({ last_seen_at: now });
}

/** Ends one session; answers whether it was live. */
export async function revokeSession(db: Knex, id: number): Promise<boolean> {
  return (await db('sessions').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() })) > 0;
}

/** Ends every live session of the user; answers how many. */
export async function revokeUserSessions(db: Knex, userId: number): Promise<number> {
  return db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

/**
 * The session cookie: HttpOnly, SameSite=Lax, for the whole site. Where the service runs on
 * https or in production it is Secure and named with the `__Host-` prefix (the browser then
 * refuses it from any other host or path, and over plain http).
 */
export function sessionCookie(config: { nodeEnv: string; publicBaseUrl: string }): { name: string; secure: boolean } {
  const secure = config.nodeEnv === 'production' || config.publicBaseUrl.startsWith('https:');
  return { name: secure ? '__Host-cs_session' : 'cs_session', secure };
}
