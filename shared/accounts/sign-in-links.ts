import { createHmac } from 'node:crypto';
import type { Knex } from '../db/knex';
import { newUid, sha256Hex } from '../ids/ids';

/**
 * One-time sign-in links, sent by email: to sign in (`sign_in`), to join a team a member
 * was invited to (`invite`), or to finish a sign-up (`sign_up`: the team is made when the
 * link is used, so nobody can take an address they cannot read). The link's token is
 * `<uid>.<HMAC of the uid under APP_KEY>`: the table keeps only its SHA-256, and the mail
 * job carries only the uid, so neither a copy of the database nor of Redis signs anyone in.
 * The link is opened by the dashboard, which posts the token (a GET never signs in: mail
 * scanners that open links must not use them up).
 */
export type LinkPurpose = 'sign_in' | 'invite' | 'sign_up';

/** How long each kind of link works. */
const LINK_TTL_MS: Record<LinkPurpose, number> = {
  sign_in: 15 * 60_000,
  sign_up: 60 * 60_000,
  invite: 7 * 86_400_000,
};

/** A link's token: the uid and its MAC, base64url. */
export const linkToken = (appKey: string, uid: string): string => `${uid}.${createHmac('sha256', appKey).update(`sign-in-link:${uid}`).digest('base64url')}`;

/** What a token looks like (checked before any lookup). */
const LINK_TOKEN = /^[0-9A-Za-z]{16}\.[\w-]{43}$/;

export const signInUrl = (publicBaseUrl: string, token: string): string => `${publicBaseUrl}/app/sign-in#token=${token}`;

export interface SignUpDetails {
  name: string;
  team_name: string;
}

export async function createSignInLink(
  db: Knex,
  appKey: string,
  input: { purpose: LinkPurpose; email: string; userId?: number; signUp?: SignUpDetails },
  now: Date,
): Promise<string> {
  const uid = newUid();
  await db('sign_in_links').insert({
    uid,
    purpose: input.purpose,
    email: input.email,
    user_id: input.userId ?? null,
    sign_up: input.signUp ? JSON.stringify(input.signUp) : null,
    token_hash: sha256Hex(linkToken(appKey, uid)),
    created_at: now,
    expires_at: new Date(now.getTime() + LINK_TTL_MS[input.purpose]),
  });
  return uid;
}

interface UsedLink {
  id: number;
  purpose: LinkPurpose;
  email: string;
  user_id: number | null;
  sign_up: SignUpDetails | null;
}

/**
 * Uses the link up, in the caller's transaction: it works once, before it expires. Null
 * for a token that is unknown, used or expired (the caller answers all three alike).
 */
export async function useSignInLink(trx: Knex, token: string, now: Date): Promise<UsedLink | null> {
  if (!LINK_TOKEN.test(token)) return null;
  const [row] = await trx('sign_in_links')
    .where({ token_hash: sha256Hex(token) })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning(['id', 'purpose', 'email', 'user_id', 'sign_up']);
  return (row as UsedLink | undefined) ?? null;
}
