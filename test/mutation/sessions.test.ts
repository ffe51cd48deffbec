import type { NextFunction, Request, Response } from 'express';
import { findLiveSession, insertTokenRow, type TokenOwner } from '../../shared/accounts/accounts.repository';
import { atLeast, ROLES } from '../../shared/accounts/roles';
import { createSession, csrfTokenOf, revokeSession, revokeUserSessions, SESSION_IDLE_MS, SESSION_MAX_MS, SESSION_SECRET, sessionCookie, touchSession } from '../../services/gateway/http/sessions';
import { createSignInLink, linkToken, signInUrl, useSignInLink } from '../../shared/accounts/sign-in-links';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb, type Knex } from '../../shared/db/knex';
import { randomBase62 } from '../../shared/ids/ids';
import { apiRateLimit, type AuthContext, authenticate, authOf, requireRole } from '../../services/gateway/http/auth';
import { PlanRateLimits } from '../../services/gateway/http/rate-limits';
import { createRedis, whenReady } from '../../shared/queues/redis';
import { waitFor } from '../helpers/wait';
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
    expect(new Date((await db('users').where({ id: team.userId }).first('last_sign_in_at')).last_sign_in_at).getTime()).toBe(now.getTime());
    // Only that user's sign-in, and only that session's use, are recorded.
    const bystander = await createTeamWithOwner(db, { name: 'Bystander', email: `by-${randomBase62(10).toLowerCase()}@example.test`, plan: 'pro', withToken: false });
    const theirs = await createSession(db, { userId: bystander.userId, teamId: bystander.teamId }, new Date('2029-01-01T00:00:00Z'));
    await createSession(db, { userId: team.userId, teamId: team.teamId }, now);
    expect(new Date((await db('users').where({ id: bystander.userId }).first('last_sign_in_at')).last_sign_in_at).toISOString()).toBe('2029-01-01T00:00:00.000Z');
    await touchSession(db, row.id, new Date(now.getTime() + 20 * 86_400_000 + 1));
    expect(new Date((await db('sessions').where({ uid: theirs.uid }).first('last_seen_at')).last_seen_at).toISOString()).toBe('2029-01-01T00:00:00.000Z');
    const other = await createSession(db, { userId: team.userId, teamId: team.teamId }, now);
    const otherHash = (await import('../../shared/accounts/tokens')).hashToken(other.secret);
    expect(await revokeSession(db, row.id)).toBe(true);
    expect(await revokeSession(db, row.id)).toBe(false);
    expect(await at(1)).toBeNull();
    // Only that one ended.
    expect(await findLiveSession(db, otherHash, new Date(now.getTime() + 1), SESSION_IDLE_MS)).not.toBeNull();
  });

  it('sign out everywhere ends every live session of that user, and only theirs', async () => {
    const now = new Date();
    const someoneElse = await createTeamWithOwner(db, { name: 'Others', email: `mut-${randomBase62(10).toLowerCase()}@example.test`, plan: 'pro', withToken: false });
    const theirs = await createSession(db, { userId: someoneElse.userId, teamId: someoneElse.teamId }, now);
    const mine = [await createSession(db, { userId: team.userId, teamId: team.teamId }, now), await createSession(db, { userId: team.userId, teamId: team.teamId }, now)];
    const { hashToken } = await import('../../shared/accounts/tokens');
    const live = (secret: string) => findLiveSession(db, hashToken(secret), new Date(now.getTime() + 1), SESSION_IDLE_MS);
    expect(await revokeUserSessions(db, team.userId)).toBeGreaterThanOrEqual(2);
    for (const m of mine) expect(await live(m.secret)).toBeNull();
    expect(await live(theirs.secret)).not.toBeNull();
    expect(await revokeUserSessions(db, team.userId)).toBe(0);
  });
});

describe('the authenticate middleware', () => {
  const cookieName = 'cs_session';
  let clock: { now: () => Date };
  const run = async (headers: Record<string, string>, method = 'GET', cache = new LiveCache<TokenOwner>({ ttlMs: 10_000, max: 10 })) => {
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

  it('refuses a made-up token however it is spaced, and takes one after any run of blanks', async () => {
    expect((await run({ Authorization: `Bearer  \t${token} ` })).status).toBe(200);
    expect((await run({ Authorization: `bearer ${token}` })).status).toBe(200);
    expect((await run({ Authorization: `xBearer ${token}` })).status).toBe(401);
    expect((await run({ Authorization: `Bearer ${token} extra` })).status).toBe(401);
    expect((await run({ Authorization: `Bearer${token}` })).status).toBe(401);
  });

  it('says what is missing when a session changes something without its CSRF token', async () => {
    expect(await run({ Cookie: `${cookieName}=${secret}` }, 'POST')).toEqual({
      status: 403,
      message: 'This request needs the session’s CSRF token in the X-CSRF-Token header (GET /api/session gives it).',
    });
  });

  it('keeps what it read in the cache, and trusts a cached credential only for its own kind and hash', async () => {
    const { hashToken } = await import('../../shared/accounts/tokens');
    const cache = liveCache();
    expect((await run({ Cookie: `${cookieName}=${secret}` }, 'GET', cache)).status).toBe(200);
    expect((await run({ Authorization: `Bearer ${token}` }, 'GET', cache)).status).toBe(200);
    const session = cache.get(hashToken(secret)) as TokenOwner;
    const bearer = cache.get(hashToken(token)) as TokenOwner;
    expect(session.kind).toBe('session');
    expect(bearer.kind).toBe('api');
    // The session's secret sent as a bearer token finds the cached session: still a 401.
    expect((await run({ Authorization: `Bearer ${secret}` }, 'GET', cache)).status).toBe(401);
    // A token owner cached under a session secret's hash (it cannot happen; the check holds if it did).
    const planted = `css_${'p'.repeat(40)}`;
    cache.set(hashToken(planted), { ...bearer, tokenHash: hashToken(planted), expiresMs: Date.now() + 60_000 }, cache.begin());
    expect((await run({ Cookie: `${cookieName}=${planted}` }, 'GET', cache)).status).toBe(401);
    // An entry whose hash is not the credential's.
    const stray = `css_${'s'.repeat(40)}`;
    cache.set(hashToken(stray), session, cache.begin());
    expect((await run({ Cookie: `${cookieName}=${stray}` }, 'GET', cache)).status).toBe(401);
    // A cookie of the wrong shape is refused even when its hash is known.
    const odd = 'not-a-session-secret';
    cache.set(hashToken(odd), { ...session, tokenHash: hashToken(odd) }, cache.begin());
    expect((await run({ Cookie: `${cookieName}=${odd}` }, 'GET', cache)).status).toBe(401);
    // A revoked token stays accepted until the cache hears of it (invalidation does that).
    const revoked = (await insertTokenRow(db, { userId: team.userId, teamId: team.teamId, kind: 'api' })).token;
    expect((await run({ Authorization: `Bearer ${revoked}` }, 'GET', cache)).status).toBe(200);
    await db('api_tokens').where({ token_hash: hashToken(revoked) }).update({ revoked_at: db.fn.now() });
    expect((await run({ Authorization: `Bearer ${revoked}` }, 'GET', cache)).status).toBe(200);
    expect((await run({ Authorization: `Bearer ${revoked}` })).status).toBe(401);
  });

  it('ends a session at its expiry to the millisecond', async () => {
    const { hashToken } = await import('../../shared/accounts/tokens');
    const cache = liveCache();
    expect((await run({ Cookie: `${cookieName}=${secret}` }, 'GET', cache)).status).toBe(200);
    const cached = cache.get(hashToken(secret)) as TokenOwner;
    const end = cached.expiresMs as number;
    clock = { now: () => new Date(end - 1) };
    expect((await run({ Cookie: `${cookieName}=${secret}` }, 'GET', cache)).status).toBe(200);
    clock = { now: () => new Date(end) };
    expect((await run({ Cookie: `${cookieName}=${secret}` }, 'GET', cache)).status).toBe(401);
    cache.set(hashToken(secret), { ...cached, expiresMs: undefined }, cache.begin());
    clock = { now: () => new Date() };
    expect((await run({ Cookie: `${cookieName}=${secret}` }, 'GET', cache)).status).toBe(401);
  });

  it('records a credential’s use when the last record is over a minute old, not sooner', async () => {
    const { hashToken } = await import('../../shared/accounts/tokens');
    const fresh = (await insertTokenRow(db, { userId: team.userId, teamId: team.teamId, kind: 'api' })).token;
    // A null column is "not recorded yet": waitFor keeps polling only on undefined/false.
    const used = async () => ((await db('api_tokens').where({ token_hash: hashToken(fresh) }).first('last_used_at')).last_used_at as string | null) ?? undefined;
    const cache = liveCache();
    expect((await run({ Authorization: `Bearer ${fresh}` }, 'GET', cache)).status).toBe(200);
    const first = await waitFor(used, { what: 'the token’s use recorded' });
    // 30 s later: not recorded again.
    await db('api_tokens').where({ token_hash: hashToken(fresh) }).update({ last_used_at: null });
    const owner = cache.get(hashToken(fresh)) as TokenOwner;
    // The middleware decides at once (it marks the cached owner used when it records), so
    // "not recorded" is read off the owner, without waiting for a write that never comes.
    const thirty = new Date(Date.now() - 30_000).toISOString();
    owner.lastUsedAt = thirty;
    expect((await run({ Authorization: `Bearer ${fresh}` }, 'GET', cache)).status).toBe(200);
    expect(owner.lastUsedAt).toBe(thirty);
    // Exactly a minute later: not yet.
    const fixed = Date.now();
    clock = { now: () => new Date(fixed) };
    const sixty = new Date(fixed - 60_000).toISOString();
    owner.lastUsedAt = sixty;
    expect((await run({ Authorization: `Bearer ${fresh}` }, 'GET', cache)).status).toBe(200);
    expect(owner.lastUsedAt).toBe(sixty);
    clock = { now: () => new Date() };
    // 61 s later: recorded.
    owner.lastUsedAt = new Date(Date.now() - 61_000).toISOString();
    expect((await run({ Authorization: `Bearer ${fresh}` }, 'GET', cache)).status).toBe(200);
    expect(new Date((await waitFor(used, { what: 'the token’s use recorded' })) as string).getTime()).toBeGreaterThanOrEqual(new Date(first as string).getTime());
    // A session's use is recorded on the session.
    const s = await createSession(db, { userId: team.userId, teamId: team.teamId }, new Date(Date.now() - 120_000));
    const seen = async () => (await db('sessions').where({ secret_hash: hashToken(s.secret) }).first('last_seen_at')).last_seen_at as string;
    const before = await seen();
    expect((await run({ Cookie: `${cookieName}=${s.secret}` })).status).toBe(200);
    await waitFor(async () => new Date(await seen()).getTime() > new Date(before).getTime(), { what: 'the session’s use recorded' });
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

/** A cache that keeps what it is given (as the gateway's does while its invalidation channel is up). */
function liveCache(): LiveCache<TokenOwner> {
  const cache = new LiveCache<TokenOwner>({ ttlMs: 10_000, max: 10 });
  cache.setLive(true);
  return cache;
}


describe('authOf and the API rate limit', () => {
  it('authOf refuses a request that was not authenticated', () => {
    expect(() => authOf({} as Request)).toThrow('Unauthenticated.');
  });

  it('counts sessions and tokens in windows of their own, and answers 429 past the limit with its headers', async () => {
    const redis = createRedis(process.env.TEST_REDIS_URL as string, 'client');
    try {
      await whenReady(redis, 5000);
      const limits = new PlanRateLimits(redis, `{mut_${randomBase62(8)}}`);
      const middleware = apiRateLimit(limits)();
      const call = async (auth: Partial<AuthContext>) => {
        const headers: Record<string, string> = {};
        const res = { setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as Response;
        const req = { auth: { teamId: 1, userId: 1, role: 'owner', limits: { apiPerMinuteToken: 2, apiPerMinuteTeam: null, extractionsPerMinute: null }, ...auth } } as unknown as Request;
        try {
          await middleware(req, res, (() => undefined) as NextFunction);
          return { status: 200, headers };
        } catch (err) {
          return { status: (err as { status: number }).status, headers };
        }
      };
      expect(await call({ tokenId: 5, tokenKind: 'api' })).toEqual({ status: 200, headers: { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1' } });
      expect((await call({ tokenId: 5, tokenKind: 'api' })).status).toBe(200);
      // Session 5 is not token 5.
      expect((await call({ tokenId: 5, tokenKind: 'session' })).status).toBe(200);
      const over = await call({ tokenId: 5, tokenKind: 'api' });
      expect(over.status).toBe(429);
      expect(over.headers['X-RateLimit-Remaining']).toBe('0');
      expect(Number(over.headers['Retry-After'])).toBeGreaterThan(0);
      // An unlimited plan is not counted at all.
      const free = await call({ tokenId: 6, tokenKind: 'api', limits: { apiPerMinuteToken: null, apiPerMinuteTeam: null, extractionsPerMinute: null } });
      expect(free).toEqual({ status: 200, headers: {} });
    } finally {
      redis.disconnect();
    }
  });
});
