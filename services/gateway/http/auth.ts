import type { Request, RequestHandler } from 'express';
import { findActiveToken, type PlanLimits, type TokenOwner, touchToken } from '../../../shared/accounts/accounts.repository';
import { hashToken, sameDigest, type TokenKind } from '../../../shared/accounts/tokens';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import type { Knex } from '../../../shared/db/knex';
import { tooManyRequests, unauthenticated } from '../../../shared/errors/app-error';
import type { Logger } from '../../../shared/logging/logger';
import type { LiveCache } from '../live-cache';
import { type LimitCheck, type PlanRateLimits, verdictHeaders } from './rate-limits';

export interface AuthContext {
  teamId: number;
  userId: number;
  tokenId: number;
  tokenKind: TokenKind;
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

/** `Authorization: Bearer <token>`: 401 for a missing, unknown or revoked token. */
export function authenticate(db: Knex, logger: Logger, cache: LiveCache<TokenOwner>): RequestHandler {
  return async (req, _res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match) throw unauthenticated();
    const hash = hashToken(match[1]);
    let owner = cache.get(hash);
    if (!owner) {
      const startedAt = cache.begin();
      owner = (await findActiveToken(db, hash)) ?? undefined;
      if (owner) cache.set(hash, owner, startedAt);
    }
    if (!owner || !sameDigest(owner.tokenHash, hash)) throw unauthenticated();
    req.auth = { teamId: owner.teamId, userId: owner.userId, tokenId: owner.tokenId, tokenKind: owner.kind, limits: owner.limits };
    // last_used_at is informative: refresh it at most once a minute, off the request path.
    const last = owner.lastUsedAt ? pgTimestampToMillis(owner.lastUsedAt) : 0;
    if (Date.now() - last > TOUCH_EVERY_MS) {
      owner.lastUsedAt = new Date().toISOString();
      touchToken(db, owner.tokenId).catch((err) => logger.warn({ err }, 'could not record token use'));
    }
    next();
  };
}

/** The caller of an authenticated route (the route declares auth: true). */
export function authOf(req: Request): AuthContext {
  if (!req.auth) throw unauthenticated();
  return req.auth;
}

/**
 * The plan's API limits: per token and per team, per minute, counted in Redis for every
 * gateway, together with the route's own limits (extraction per team). Every limited answer carries X-RateLimit-Limit / -Remaining (of the limit
 * nearest its end); beyond it, 429 with Retry-After. Unlimited plans are not counted.
 */
export const apiRateLimit =
  (limits: PlanRateLimits) =>
  (extra?: (auth: AuthContext) => LimitCheck[]): RequestHandler =>
  async (req, res, next) => {
    const auth = authOf(req);
    const verdict = await limits.take([
      { scope: 'api-token', key: auth.tokenId, perMinute: auth.limits.apiPerMinuteToken },
      { scope: 'api-team', key: auth.teamId, perMinute: auth.limits.apiPerMinuteTeam },
      ...(extra ? extra(auth) : []),
    ]);
    if (verdict) verdictHeaders(res, verdict);
    if (verdict?.over) throw tooManyRequests(verdict.retryAfterSeconds);
    next();
  };
