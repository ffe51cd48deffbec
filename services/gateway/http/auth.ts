import type { Request, RequestHandler } from 'express';
import { findActiveToken, type TokenOwner, touchToken } from '../../../shared/accounts/accounts.repository';
import { hashToken, sameDigest, type TokenKind } from '../../../shared/accounts/tokens';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import type { Knex } from '../../../shared/db/knex';
import { unauthenticated } from '../../../shared/errors/app-error';
import type { Logger } from '../../../shared/logging/logger';
import type { LiveCache } from '../../../shared/cache/live-cache';

export interface AuthContext {
  teamId: number;
  userId: number;
  tokenId: number;
  tokenKind: TokenKind;
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
    req.auth = { teamId: owner.teamId, userId: owner.userId, tokenId: owner.tokenId, tokenKind: owner.kind };
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
