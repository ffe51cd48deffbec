import type { NextFunction, Request, Response } from 'express';
import { findLiveSession, insertTokenRow, type TokenOwner } from '../../shared/accounts/accounts.repository';
import { atLeast, ROLES } from '../../shared/accounts/roles';
import { createSession, csrfTokenOf, revokeSession, SESSION_IDLE_MS, SESSION_MAX_MS, SESSION_SECRET, sessionCookie, touchSession } from '../../shared/accounts/sessions';
import { createSignInLink, linkToken, signInUrl, useSignInLink } from '../../shared/accounts/sign-in-links';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb, type Knex } from '../../shared/db/knex';
import { randomBase62 } from '../../shared/ids/ids';
import { authenticate, requireRole } from '../../services/gateway/http/auth';
import { LiveCache } from '../../services/gateway/live-cache';
import { createLogger } from '../../shared/logging/logger';

/**
 * The dashboard's credentials: the session secret's shape, its CSRF token, the sign-in link
 * token, the cookie's attributes, roles, and the middleware that reads them. Vectors were
 * computed once, outside the code under test:
 *   printf %s "csrf:css_$(printf 'a%.0s' {1..40})" | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 *   printf %s 'sign-in-link:Lnk000000000000A' | openssl dgst -sha256 -hmac 'app-key-for-tests' -binary | base64 | tr '+/' '-_' | tr -d '='
 *   printf %s 'Lnk000000000000A.<that>' | sha256sum   (the link's stored hash)
 */
const KEY = 'app-key-for-tests';
const SECRET = `css_${'a'.repeat(40)}`;
const CSRF = 'L7HoNtnPmBRpfyIpWs40abJMhZScDqAU6SMFgNQwiVQ';
const LINK_UID = 'Lnk000000000000A';
const LINK_TOKEN = `${LINK_UID}.QtXopmjOrAONnrB8rnqoBsOJUFp-YfnrR_BcU4hgZw8`;
const LINK_HASH = '4a366b6bd0295bb0d93cfff4e3e4488b9670421122d545481bc9f52de9490439';

let db: Knex;
let team: { teamId: number; userId: number };
beforeAll(async () => {
  db = createDb(process.env.TEST_DATABASE_URL as string, { poolMax: 2 });
  const email = `mut-${randomBase62(10).toLowerCase()}@example.test`;
  team = await createTeamWithOwner(db, { name: 'Mutants', email, plan: 'pro', withToken: false });
});
afterAll(() => db?.destroy());

describe('secrets and tokens', () => {
  it('CSRF tokens are the HMAC-SHA256 of "csrf:" and the secret, base64url', () => {
    expect(csrfTokenOf(KEY, SECRET)).toBe(CSRF);
    expect(csrfTokenOf(`${KEY}x`, SECRET)).not.toBe(CSRF);
  });

  it('a link token is its uid, a dot, and the HMAC of "sign-in-link:" and the uid', () => {
    expect(linkToken(KEY, LINK_UID)).toBe(LINK_TOKEN);
    expect(signInUrl('https://cal.example.com', LINK_TOKEN)).toBe(`https://cal.example.com/app/sign-in#token=${LINK_TOKEN}`);
  });

  it('a session secret is css_ and exactly 40 base62 characters', () => {
    expect(SESSION_SECRET.test(SECRET)).toBe(true);
    for (const bad of [`${SECRET}a`, SECRET.slice(0, -1), `x${SECRET}`, SECRET.replace('css_', 'cst_'), `css_${'a'.repeat(39)}-`]) expect(SESSION_SECRET.test(bad)).toBe(false);
  });

  it('the cookie is Secure and __Host- on https or in production, plain in development on http', () => {
    expect(sessionCookie({ nodeEnv: 'development', publicBaseUrl: 'http://localhost:3000' })).toEqual({ name: 'cs_session', secure: false });
    expect(sessionCookie({ nodeEnv: 'development', publicBaseUrl: 'https://cal.example.com' })).toEqual({ name: '__Host-cs_session', secure: true });
    expect(sessionCookie({ nodeEnv: 'production', publicBaseUrl: 'http://cal.internal' })).toEqual({ name: '__Host-cs_session', secure: true });
  });

  it('roles are ordered member < admin < owner', () => {
    expect(ROLES).toEqual(['member', 'admin', 'owner']);
    const table = ROLES.map((r) => ROLES.map((needed) => atLeast(r, needed)));
    expect(table).toEqual([
      [true, false, false],
      [true, true, false],
      [true, true, true],
    ]);
  });
});

describe('sign-in links', () => {
  it('store only the SHA-256 of the token, and work once, until their end', async () => {
    const now = new Date('2030-01-01T10:00:00Z');
    const uid = await createSignInLink(db, KEY, { purpose: 'sign_in', email: 'a@example.test', userId: team.userId }, now);
    const row = await db('sign_in_links').where({ uid }).first();
    expect(new Date(row.expires_at).getTime() - now.getTime()).toBe(15 * 60_000);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    const token = linkToken(KEY, uid);
    // At the very end it no longer works; a millisecond before, it does, once.
    expect(await useSignInLink(db, token, new Date(now.getTime() + 15 * 60_000))).toBeNull();
    expect(await useSignInLink(db, token, new Date(now.getTime() + 15 * 60_000 - 1))).toMatchObject({ purpose: 'sign_in', user_id: team.userId });
    expect(await useSignInLink(db, token, now)).toBeNull();
  });

  it('keep the hash of the published vector, and an invitation lasts 7 days, a sign-up an hour', async () => {
    const now = new Date('2030-01-01T10:00:00Z');
    const invite = await createSignInLink(db, KEY, { purpose: 'invite', email: 'b@example.test', userId: team.userId }, now);
    const signUp = await createSignInLink(db, KEY, { purpose: 'sign_up', email: 'c@example.test', signUp: { name: 'C', team_name: 'Cs' } }, now);
    const ends = async (uid: string) => new Date((await db('sign_in_links').where({ uid }).first()).expires_at).getTime() - now.getTime();
    expect(await ends(invite)).toBe(7 * 86_400_000);
    expect(await ends(signUp)).toBe(3_600_000);
    const used = await useSignInLink(db, linkToken(KEY, signUp), now);
    expect(used?.sign_up).toEqual({ name: 'C', team_name: 'Cs' });
    // The published vector's row (made anew: one database serves every run of a mutation test).
    await db('sign_in_links').where({ uid: LINK_UID }).delete();
    await db('sign_in_links').insert({ uid: LINK_UID, purpose: 'sign_in', email: 'v@example.test', token_hash: LINK_HASH, expires_at: new Date(Date.now() + 60_000) });
    expect(await useSignInLink(db, LINK_TOKEN, new Date())).toMatchObject({ email: 'v@example.test' });
  });

  it.each([
    ['empty', ''],
    ['no MAC', LINK_UID],
    ['a short uid', `${LINK_UID.slice(1)}.${LINK_TOKEN.split('.')[1]}`],
    ['a long MAC', `${LINK_TOKEN}A`],
    ['a character before', `x${LINK_TOKEN}`],
    ['another separator', LINK_TOKEN.replace('.', '_')],
  ])('refuse a token of the wrong shape (%s) before looking it up', async (_what, token) => {
    expect(await useSignInLink(db, token, new Date())).toBeNull();
  });
});

describe('sessions', () => {
  it('last 30 days at most and end after 14 idle days, read live until then', async () => {
    expect(SESSION_MAX_MS).toBe(30 * 86_400_000);
    expect(SESSION_IDLE_MS).toBe(14 * 86_400_000);
    const now = new Date('2030-02-01T00:00:00Z');
    const made = await createSession(db, { userId: team.userId, teamId: team.teamId, userAgent: 'x'.repeat(300) }, now);
    expect(made.expiresAt.getTime() - now.getTime()).toBe(SESSION_MAX_MS);
    const row = await db('sessions').where({ uid: made.uid }).first();
    expect(row.user_agent).toHaveLength(255);
    const hash = (await import('../../shared/accounts/tokens')).hashToken(made.secret);
    expect(row.secret_hash).toBe(hash);
    const at = (ms: number) => findLiveSession(db, hash, new Date(now.getTime() + ms), SESSION_IDLE_MS);
    expect(await at(SESSION_IDLE_MS - 1)).toMatchObject({ kind: 'session', userId: team.userId, role: 'owner' });
    expect(await at(SESSION_IDLE_MS)).toBeNull();
    await touchSession(db, row.id, new Date(now.getTime() + 20 * 86_400_000));
    expect(await at(SESSION_MAX_MS - 1)).not.toBeNull();
    expect(await at(SESSION_MAX_MS)).toBeNull();
    expect(await revokeSession(db, row.id)).toBe(true);
    expect(await revokeSession(db, row.id)).toBe(false);
    expect(await at(1)).toBeNull();
  });
});

describe('the authenticate middleware', () => {
  const cookieName = 'cs_session';
  let clock: { now: () => Date };
  const run = async (headers: Record<string, string>, method = 'GET') => {
    const cache = new LiveCache<TokenOwner>({ ttlMs: 10_000, max: 10 });
    const middleware = authenticate({ db, logger: createLogger('mut', 'silent'), clock, cache, appKey: KEY, cookieName });
    const req = { headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), method, get: (n: string) => headers[n] } as unknown as Request;
    let passed = false;
    try {
      await middleware(req, {} as Response, (() => (passed = true)) as NextFunction);
      return { status: passed ? 200 : 0, auth: req.auth };
    } catch (err) {
      return { status: (err as { status: number }).status, message: (err as Error).message };
    }
  };

  let secret: string;
  let token: string;
  beforeAll(async () => {
    clock = { now: () => new Date() };
    secret = (await createSession(db, { userId: team.userId, teamId: team.teamId }, new Date())).secret;
    token = (await insertTokenRow(db, { userId: team.userId, teamId: team.teamId, kind: 'api' })).token;
  });

  it('takes a bearer token, or else the session cookie', async () => {
    expect(await run({ Authorization: `Bearer ${token}` })).toMatchObject({ status: 200, auth: { tokenKind: 'api', role: 'owner', userId: team.userId } });
    const bySession = await run({ Cookie: `other=1; ${cookieName}=${secret}` });
    expect(bySession).toMatchObject({ status: 200, auth: { tokenKind: 'session', sessionSecret: secret, role: 'owner' } });
    // A header that is not a bearer token is a 401, even with a good cookie beside it.
    expect((await run({ Authorization: 'Basic abc', Cookie: `${cookieName}=${secret}` })).status).toBe(401);
    expect((await run({})).status).toBe(401);
    expect((await run({ Cookie: `${cookieName}=${secret}x` })).status).toBe(401);
    expect((await run({ Cookie: `${cookieName}=css_${'b'.repeat(40)}` })).status).toBe(401);
    // The token's secret as a cookie, and the session's secret as a bearer token, are nothing.
    expect((await run({ Cookie: `${cookieName}=${token}` })).status).toBe(401);
    expect((await run({ Authorization: `Bearer ${secret}` })).status).toBe(401);
  });

  it('needs the CSRF token for every method but GET, HEAD and OPTIONS on a session, never on a token', async () => {
    const cookie = `${cookieName}=${secret}`;
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect((await run({ Cookie: cookie }, method)).status).toBe(200);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect((await run({ Cookie: cookie }, method)).status).toBe(403);
      expect((await run({ Cookie: cookie, 'x-csrf-token': csrfTokenOf(KEY, secret).slice(1) }, method)).status).toBe(403);
      expect((await run({ Cookie: cookie, 'x-csrf-token': csrfTokenOf(KEY, secret) }, method)).status).toBe(200);
      expect((await run({ Authorization: `Bearer ${token}` }, method)).status).toBe(200);
    }
  });

  it('refuses a session past its end even when it was read before', async () => {
    const cookie = `${cookieName}=${secret}`;
    clock = { now: () => new Date(Date.now() + SESSION_MAX_MS + 1000) };
    expect((await run({ Cookie: cookie })).status).toBe(401);
    clock = { now: () => new Date() };
  });

  it('lets a role through only at or above the one needed', () => {
    const pass = (role: string, needed: 'member' | 'admin' | 'owner') => {
      let passed = false;
      try {
        requireRole(needed)({ auth: { role } } as unknown as Request, {} as Response, (() => (passed = true)) as NextFunction);
      } catch (err) {
        expect((err as { status: number }).status).toBe(403);
        expect((err as Error).message).toBe(`This needs the ${needed} role in the team; yours is ${role}.`);
      }
      return passed;
    };
    expect([pass('member', 'admin'), pass('admin', 'admin'), pass('owner', 'admin'), pass('admin', 'owner')]).toEqual([false, true, true, false]);
  });
});
