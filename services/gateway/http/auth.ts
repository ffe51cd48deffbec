import type { Request, RequestHandler } from 'express';
import { parse as parseCookies } from 'cookie';
import { findActiveToken, findLiveSession, type PlanLimits, type TokenOwner, touchToken } from '../../../shared/accounts/accounts.repository';
import { atLeast, type Role } from '../../../shared/accounts/roles';
import { csrfTokenOf, SESSION_IDLE_MS, SESSION_SECRET, touchSession } from './sessions';
import { hashToken, sameDigest, sameSecret, type TokenKind } from '../../../shared/accounts/tokens';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import type { Knex } from '../../../shared/db/knex';
import { forbidden, tooManyRequests, unauthenticated } from '../../../shared/errors/app-error';
import type { Clock } from '../../../shared/lifecycle/clock';
import type { Logger } from '../../../shared/logging/logger';
import type { LiveCache } from '../live-cache';
import { type LimitCheck, type PlanRateLimits, verdictHeaders } from './rate-limits';

export interface AuthContext {
  teamId: number;
  userId: number;
  role: Role;
  /** The token's row id, or the session's (see `kind`). */
  tokenId: number;
  /** `session`: a dashboard session cookie; otherwise the bearer token's kind. */
  tokenKind: TokenKind | 'session';
  /** Sessions only: the cookie's secret (its CSRF token and sign-out are derived from it). */
  sessionSecret?: string;
  /** The team's plan's request limits. */
  limits: PlanLimits;
}

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
  }
}

const BEARER = /^Bearer[ \t]+([A-Za-z0-9_\-.~+/]{10,200}=*)[ \t]*$/i;
const TOUCH_EVERY_MS = 60_000;
/** Methods that change nothing: a session needs no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface AuthDeps {
  db: Knex;
  logger: Logger;
  clock: Clock;
  cache: LiveCache<TokenOwner>;
  appKey: string;
  /** The session cookie's name (see sessionCookie). */
  cookieName: string;
}

/**
 * Who is calling: `Authorization: Bearer <token>`, or (without that header) the dashboard's
 * session cookie. 401 for a missing, unknown, revoked or expired credential. A request on a
 * session that changes something (any method but GET, HEAD, OPTIONS) needs the session's
 * CSRF token in `X-CSRF-Token` (403 otherwise): another site can make a browser send the
 * cookie, but cannot read the token nor send a custom header without our consent (CORS).
 */
export function authenticate(deps: AuthDeps): RequestHandler {
  const { db, logger, cache } = deps;
  const lookUp = async (hash: string, find: () => Promise<TokenOwner | null>) => {
    let owner = cache.get(hash);
    if (!owner) {
      const startedAt = cache.begin();
      owner = (await find()) ?? undefined;
      if (owner) cache.set(hash, owner, startedAt);
    }
    return owner && sameDigest(owner.tokenHash, hash) ? owner : undefined;
  };
  return async (req, _res, next) => {
    const now = deps.clock.now();
    let owner: TokenOwner | undefined;
    let sessionSecret: string | undefined;
    if (req.headers.authorization !== undefined) {
      const match = BEARER.exec(req.headers.authorization);
      if (!match) throw unauthenticated();
      const hash = hashToken(match[1]);
      owner = await lookUp(hash, () => findActiveToken(db, hash));
      if (!owner || owner.kind === 'session') throw unauthenticated();
    } else {
      const secret = req.headers.cookie ? parseCookies(req.headers.cookie)[deps.cookieName] : undefined;
      if (!secret || !SESSION_SECRET.test(secret)) throw unauthenticated();
      const hash = hashToken(secret);
      owner = await lookUp(hash, () => findLiveSession(db, hash, now, SESSION_IDLE_MS));
      // A cached session may have reached its end since it was read.
      if (!owner || owner.kind !== 'session' || (owner.expiresMs ?? 0) <= now.getTime()) throw unauthenticated();
      if (!SAFE_METHODS.has(req.method) && !sameSecret(req.get('x-csrf-token') ?? '', csrfTokenOf(deps.appKey, secret))) {
        throw forbidden('This request needs the session’s CSRF token in the X-CSRF-Token header (GET /api/session gives it).');
      }
      sessionSecret = secret;
    }
    req.auth = { teamId: owner.teamId, userId: owner.userId, role: owner.role, tokenId: owner.tokenId, tokenKind: owner.kind, sessionSecret, limits: owner.limits };
    // last_used_at / last_seen_at: refreshed at most once a minute, off the request path.
    const last = owner.lastUsedAt ? pgTimestampToMillis(owner.lastUsedAt) : 0;
    if (now.getTime() - last > TOUCH_EVERY_MS) {
      owner.lastUsedAt = now.toISOString();
      const touch = owner.kind === 'session' ? touchSession(db, owner.tokenId, now) : touchToken(db, owner.tokenId);
      touch.catch((err) => logger.warn({ err }, 'could not record credential use'));
    }
    next();
  };
}

/** The caller of an authenticated route (the route declares auth: true). */
export function authOf(req: Request): AuthContext {
  if (!req.auth) throw unauthenticated();
  return req.auth;
}

/** A route's least role: 403 for a caller below it (a token acts with its user's role). */
export const requireRole =
  (needed: Role): RequestHandler =>
  (req, _res, next) => {
    if (!atLeast(authOf(req).role, needed)) throw forbidden(`This needs the ${needed} role in the team; yours is ${authOf(req).role}.`);
    next();
  };

/**
 * The plan's API limits: per token (or session) and per team, per minute, counted in Redis
 * for every gateway, together with the route's own limits (extraction per team). Every
 * limited answer carries X-RateLimit-Limit / -Remaining (of the limit nearest its end);
 * beyond it, 429 with Retry-After. Unlimited plans are not counted.
 */
export const apiRateLimit =
  (limits: PlanRateLimits) =>
  (extra?: (auth: AuthContext) => LimitCheck[]): RequestHandler =>
  async (req, res, next) => {
    const auth = authOf(req);
    const verdict = await limits.take([
      { scope: auth.tokenKind === 'session' ? 'api-session' : 'api-token', key: auth.tokenId, perMinute: auth.limits.apiPerMinuteToken },
      { scope: 'api-team', key: auth.teamId, perMinute: auth.limits.apiPerMinuteTeam },
      ...(extra ? extra(auth) : []),
    ]);
    if (verdict) verdictHeaders(res, verdict);
    if (verdict?.over) throw tooManyRequests(verdict.retryAfterSeconds);
    next();
  };
