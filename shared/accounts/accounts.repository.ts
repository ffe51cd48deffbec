import type { Knex } from '../db/knex';
import { newUid } from '../ids/ids';
import type { Role } from './roles';
import { generateToken, type TokenKind } from './tokens';

export type PlanId = 'free' | 'pro' | 'business' | 'unlimited';
export const PLAN_IDS: PlanId[] = ['free', 'pro', 'business', 'unlimited'];

/** A plan's request limits per minute (null: none). See migration 0009_plan_rate_limits. */
export interface PlanLimits {
  apiPerMinuteToken: number | null;
  apiPerMinuteTeam: number | null;
  extractionsPerMinute: number | null;
}

/**
 * Whom a credential acts for: an API or extension token, or a dashboard session (see
 * sessions.ts). Cached by the gateway under the credential's hash.
 */
export interface TokenOwner {
  /** The token's or the session's row id. */
  tokenId: number;
  tokenHash: string;
  kind: TokenKind | 'session';
  userId: number;
  teamId: number;
  /** The user's role in the team (a token acts with its user's). */
  role: Role;
  lastUsedAt: string | null;
  /** Sessions only: when it ends at the latest (ms). */
  expiresMs?: number;
  /** The team's plan's limits, read with the token (cached with it). */
  limits: PlanLimits;
}

/** The columns of a credential's owner: its user's role and the team's plan's limits. */
const OWNER_COLUMNS = ['k.user_id', 'k.team_id', 'u.role', 'p.api_per_minute_token', 'p.api_per_minute_team', 'p.extractions_per_minute'];

const ownerOf = (row: Record<string, unknown>): Pick<TokenOwner, 'userId' | 'teamId' | 'role' | 'limits'> => ({
  userId: row.user_id as number,
  teamId: row.team_id as number,
  role: row.role as Role,
  limits: {
    apiPerMinuteToken: row.api_per_minute_token as number | null,
    apiPerMinuteTeam: row.api_per_minute_team as number | null,
    extractionsPerMinute: row.extractions_per_minute as number | null,
  },
});

/** A credential table (`api_tokens` or `sessions`) as `k`, with its user and its team's plan. */
const withOwner = (db: Knex, table: 'api_tokens' | 'sessions') =>
  db(`${table} as k`).join('users as u', 'u.id', 'k.user_id').join('teams as t', 't.id', 'k.team_id').join('plans as p', 'p.id', 't.plan_id').select(OWNER_COLUMNS);

interface NewTeam {
  teamId: number;
  teamUid: string;
  userId: number;
  userUid: string;
  /** Empty when made without one (a dashboard sign-up). */
  token: string;
  /** The team's monthly event limit in effect: its override, else its plan's (null: none). */
  eventLimit: number | null;
}

/** Creates a team, its first user (its owner) and, unless told not to, that user's API token, in one transaction. */
export async function createTeamWithOwner(
  db: Knex,
  // A plan id: one of PLAN_IDS, or a plan row added by the operator.
  input: { name: string; email: string; userName?: string; plan: string; eventLimit?: number | null; withToken?: boolean },
): Promise<NewTeam> {
  return db.transaction(async (trx) => {
    const [team] = await trx('teams')
      .insert({ uid: newUid(), name: input.name, plan_id: input.plan, event_limit_override: input.eventLimit ?? null })
      .returning(['id', 'uid']);
    const [user] = await trx('users')
      .insert({ uid: newUid(), team_id: team.id, name: input.userName ?? input.name, email: input.email, role: 'owner' })
      .returning(['id', 'uid']);
    const token = input.withToken === false ? '' : await insertToken(trx, { userId: user.id, teamId: team.id, kind: 'api', name: 'default' });
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
  return (await insertTokenRow(db, input)).token;
}

/** A new token and its public id (`tok_` + uid); the token itself exists only in this answer. */
export async function insertTokenRow(
  db: Knex,
  input: { userId: number; teamId: number; kind: TokenKind; name?: string },
): Promise<{ token: string; uid: string }> {
  const { token, hash } = generateToken(input.kind);
  const uid = newUid();
  await db('api_tokens').insert({
    uid,
    user_id: input.userId,
    team_id: input.teamId,
    kind: input.kind,
    name: input.name ?? null,
    token_hash: hash,
  });
  return { token, uid };
}

/** A team as operators see it: its owner (first user) and how many live API tokens it has. */
interface TeamSummary {
  id: number;
  uid: string;
  name: string;
  plan_id: string;
  owner_id: number;
  owner_email: string;
  live_tokens: number;
  created_at: string;
}

const teamSummaries = (db: Knex) =>
  db('teams as t')
    .join(db.raw('LATERAL (SELECT id, email FROM users WHERE team_id = t.id ORDER BY id LIMIT 1) AS o ON true'))
    .select('t.id', 't.uid', 't.name', 't.plan_id', 't.created_at', 'o.id as owner_id', 'o.email as owner_email')
    .select(db.raw("(SELECT count(*) FROM api_tokens k WHERE k.team_id = t.id AND k.kind = 'api' AND k.revoked_at IS NULL)::int AS live_tokens"));

export const listTeams = (db: Knex): Promise<TeamSummary[]> => teamSummaries(db).orderBy('t.id');

export const findTeam = (db: Knex, uid: string): Promise<TeamSummary | undefined> => teamSummaries(db).where('t.uid', uid).first();

/**
 * Puts the team on a plan, and sets or clears its own monthly event limit when given
 * (undefined: kept). Answers the limit in effect and the team's people (whose cached
 * credentials carry the old plan's limits).
 */
export async function setTeamPlan(db: Knex, teamId: number, plan: string, eventLimit?: number | null): Promise<{ eventLimit: number | null; userIds: number[] }> {
  return db.transaction(async (trx) => {
    await trx('teams')
      .where({ id: teamId })
      .update({ plan_id: plan, ...(eventLimit === undefined ? {} : { event_limit_override: eventLimit }), updated_at: trx.fn.now() });
    const { event_limit: limit } = await trx('teams as t')
      .join('plans as p', 'p.id', 't.plan_id')
      .where('t.id', teamId)
      .first<{ event_limit: number | null }>(trx.raw('COALESCE(t.event_limit_override, p.monthly_event_limit) AS event_limit'));
    const users: Array<{ id: number }> = await trx('users').select('id').where({ team_id: teamId });
    return { eventLimit: limit, userIds: users.map((u) => u.id) };
  });
}

interface TokenSummary {
  uid: string;
  kind: TokenKind;
  name: string | null;
  user_id: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export const listTokens = (db: Knex, teamId: number): Promise<TokenSummary[]> =>
  db('api_tokens').where({ team_id: teamId }).orderBy('id', 'desc').select('uid', 'kind', 'name', 'user_id', 'created_at', 'last_used_at', 'revoked_at');

/**
 * Revokes one live token, found by its public id or by its hash, of one team when `teamId`
 * is given; answers its user, or null when none was live.
 */
export async function revokeToken(db: Knex, by: { uid: string } | { hash: string }, teamId?: number): Promise<{ userId: number; uid: string } | null> {
  const [row] = await db('api_tokens')
    .where('uid' in by ? { uid: by.uid } : { token_hash: by.hash })
    .where(teamId === undefined ? {} : { team_id: teamId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() })
    .returning(['user_id', 'uid']);
  return row ? { userId: row.user_id as number, uid: row.uid as string } : null;
}

/** The user with this address, whatever its letter case (addresses are unique across teams). */
export const findUserByEmail = (
  db: Knex,
  email: string,
): Promise<{ id: number; team_id: number; email: string; password_hash: string | null } | undefined> =>
  db('users').first('id', 'team_id', 'email', 'password_hash').whereRaw('lower(email) = lower(?)', [email]);

export async function findActiveToken(db: Knex, hash: string): Promise<TokenOwner | null> {
  const row = await withOwner(db, 'api_tokens').select('k.id', 'k.token_hash', 'k.kind', 'k.last_used_at').where({ 'k.token_hash': hash }).whereNull('k.revoked_at').first();
  if (!row) return null;
  return { tokenId: row.id, tokenHash: row.token_hash, kind: row.kind, lastUsedAt: row.last_used_at, ...ownerOf(row) };
}

/** The live session with this secret's hash, as of `now`: not revoked, not expired, not idle (see sessions.ts). */
export async function findLiveSession(db: Knex, hash: string, now: Date, idleMs: number): Promise<TokenOwner | null> {
  const row = await withOwner(db, 'sessions')
    .select('k.id', 'k.secret_hash', 'k.last_seen_at', 'k.expires_at')
    .where({ 'k.secret_hash': hash })
    .whereNull('k.revoked_at')
    .where('k.expires_at', '>', now)
    .where('k.last_seen_at', '>', new Date(now.getTime() - idleMs))
    .first();
  if (!row) return null;
  return { tokenId: row.id, tokenHash: row.secret_hash, kind: 'session', lastUsedAt: row.last_seen_at, expiresMs: new Date(row.expires_at).getTime(), ...ownerOf(row) };
}

export async function touchToken(db: Knex, tokenId: number): Promise<void> {
  await db('api_tokens').where({ id: tokenId }).update({ last_used_at: db.fn.now() });
}

/** Revokes every live token of that kind for the user; answers how many. */
export async function revokeTokens(db: Knex, userId: number, kind: TokenKind): Promise<number> {
  return db('api_tokens').where({ user_id: userId, kind }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}
