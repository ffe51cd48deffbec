import type { Knex } from '../db/knex';
import { newUid } from '../ids/ids';
import { generateToken, type TokenKind } from './tokens';

export type PlanId = 'free' | 'pro' | 'business' | 'unlimited';
export const PLAN_IDS: PlanId[] = ['free', 'pro', 'business', 'unlimited'];

/** A plan's request limits per minute (null: none). See migration 0009_plan_rate_limits. */
export interface PlanLimits {
  apiPerMinuteToken: number | null;
  apiPerMinuteTeam: number | null;
  extractionsPerMinute: number | null;
}

export interface TokenOwner {
  tokenId: number;
  tokenHash: string;
  kind: TokenKind;
  userId: number;
  teamId: number;
  lastUsedAt: string | null;
  /** The team's plan's limits, read with the token (cached with it). */
  limits: PlanLimits;
}

export interface NewTeam {
  teamId: number;
  teamUid: string;
  userId: number;
  userUid: string;
  token: string;
  /** The team's monthly event limit in effect: its override, else its plan's (null: none). */
  eventLimit: number | null;
}

/** Creates a team, its first user and that user's API token, in one transaction. */
export async function createTeamWithOwner(
  db: Knex,
  // A plan id: one of PLAN_IDS, or a plan row added by the operator.
  input: { name: string; email: string; userName?: string; plan: string; eventLimit?: number | null },
): Promise<NewTeam> {
  return db.transaction(async (trx) => {
    const [team] = await trx('teams')
      .insert({ uid: newUid(), name: input.name, plan_id: input.plan, event_limit_override: input.eventLimit ?? null })
      .returning(['id', 'uid']);
    const [user] = await trx('users')
      .insert({ uid: newUid(), team_id: team.id, name: input.userName ?? input.name, email: input.email })
      .returning(['id', 'uid']);
    const token = await insertToken(trx, { userId: user.id, teamId: team.id, kind: 'api', name: 'default' });
    const { event_limit: eventLimit } = await trx('teams as t')
      .join('plans as p', 'p.id', 't.plan_id')
      .where('t.id', team.id)
      .first<{ event_limit: number | null }>(trx.raw('COALESCE(t.event_limit_override, p.monthly_event_limit) AS event_limit'));
    return { teamId: team.id, teamUid: team.uid, userId: user.id, userUid: user.uid, token, eventLimit };
  });
}

export async function insertToken(
  db: Knex,
  input: { userId: number; teamId: number; kind: TokenKind; name?: string },
): Promise<string> {
  const { token, hash } = generateToken(input.kind);
  await db('api_tokens').insert({
    user_id: input.userId,
    team_id: input.teamId,
    kind: input.kind,
    name: input.name ?? null,
    token_hash: hash,
  });
  return token;
}

export async function findActiveToken(db: Knex, hash: string): Promise<TokenOwner | null> {
  const row = await db('api_tokens as k')
    .join('teams as t', 't.id', 'k.team_id')
    .join('plans as p', 'p.id', 't.plan_id')
    .select('k.id', 'k.token_hash', 'k.kind', 'k.user_id', 'k.team_id', 'k.last_used_at', 'p.api_per_minute_token', 'p.api_per_minute_team', 'p.extractions_per_minute')
    .where({ 'k.token_hash': hash })
    .whereNull('k.revoked_at')
    .first();
  if (!row) return null;
  return {
    tokenId: row.id,
    tokenHash: row.token_hash,
    kind: row.kind,
    userId: row.user_id,
    teamId: row.team_id,
    lastUsedAt: row.last_used_at,
    limits: { apiPerMinuteToken: row.api_per_minute_token, apiPerMinuteTeam: row.api_per_minute_team, extractionsPerMinute: row.extractions_per_minute },
  };
}

export async function touchToken(db: Knex, tokenId: number): Promise<void> {
  await db('api_tokens').where({ id: tokenId }).update({ last_used_at: db.fn.now() });
}

/** Revokes every live token of that kind for the user; answers how many. */
export async function revokeTokens(db: Knex, userId: number, kind: TokenKind): Promise<number> {
  return db('api_tokens').where({ user_id: userId, kind }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}
