import { Algorithm, hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { createTeamWithOwner, findUserByEmail } from '../../../shared/accounts/accounts.repository';
import { createSignInLink, type SignUpDetails, useSignInLink } from '../../../shared/accounts/sign-in-links';
import { createSession, revokeSession, revokeUserSessions, SESSION_SECRET } from '../http/sessions';
import { hashToken } from '../../../shared/accounts/tokens';
import type { Knex } from '../../../shared/db/knex';
import { conflict, forbidden, httpError, notFound, validationFailed } from '../../../shared/errors/app-error';
import { accountMailJob, newAccountMailJobId } from '../../../shared/queues/account-mail.job';
import type { AppContext } from '../context';
import type { AuthContext } from '../http/auth';
import { findUserById } from './team.repository';

type Deps = Pick<AppContext, 'db' | 'config' | 'clock' | 'queues' | 'caches'>;

/** What a sign-in needs of the browser: the session secret it brought (ended), and its User-Agent (kept with the new one). */
export interface Client {
  broughtSecret: string | undefined;
  userAgent: string | undefined;
}

type NewSession = Awaited<ReturnType<typeof createSession>>;

/** argon2id with the library's defaults (19 MiB, 2 passes: OWASP's recommendation). */
const hashPassword = (plain: string) => argon2Hash(plain, { algorithm: Algorithm.Argon2id });
let dummy: Promise<string> | undefined;

/** Whether `plain` is the password; an address without one costs the same time (a hash of something else is checked). */
async function passwordMatches(stored: string | null, plain: string): Promise<boolean> {
  dummy ??= hashPassword('not anyone’s password, only spends the time');
  const hashed = stored ?? (await dummy);
  const matches = await argon2Verify(hashed, plain).catch(() => false);
  return stored !== null && matches;
}

/** Makes the link and queues its email in one transaction: both happen, or neither (a 503). */
const sendLink = (deps: Deps, input: Parameters<typeof createSignInLink>[2], requestId: string) =>
  deps.db.transaction(async (trx) => {
    const linkUid = await createSignInLink(trx, deps.config.appKey, input, deps.clock.now());
    await deps.queues.producer(accountMailJob).add('sign-in-link', { linkUid, meta: { requestId } }, { jobId: newAccountMailJobId() });
  });

/** Emails a sign-in link to the address when it has an account; the same (silent) outcome when not. */
export async function requestSignInLink(deps: Deps, email: string, requestId: string): Promise<void> {
  const user = await findUserByEmail(deps.db, email);
  if (user) await sendLink(deps, { purpose: 'sign_in', email: user.email, userId: user.id }, requestId);
}

/**
 * Emails a link that makes the team and its owner when used (so nobody takes an address
 * they cannot read); an address with an account gets a sign-in link instead, alike to the
 * caller. Only while SIGNUP is open: a closed sign-up is refused before `beforeSend` (the
 * caller's attempt limit) runs, so it costs the client no attempt.
 */
export async function requestSignUp(
  deps: Deps,
  input: { email: string; name: string; team_name: string },
  requestId: string,
  beforeSend: () => Promise<void>,
): Promise<void> {
  if (deps.config.signup !== 'open') throw forbidden('Sign-up is closed here: ask a team’s admin to invite you.');
  await beforeSend();
  const user = await findUserByEmail(deps.db, input.email);
  const signUp: SignUpDetails = { name: input.name, team_name: input.team_name };
  await sendLink(deps, user ? { purpose: 'sign_in', email: user.email, userId: user.id } : { purpose: 'sign_up', email: input.email, signUp }, requestId);
}

/** A new session (never one the browser brought), and the one it brought ends. */
async function startSession(deps: Deps, trx: Knex, client: Client, user: { id: number; team_id: number }): Promise<NewSession> {
  const brought = client.broughtSecret;
  if (brought && SESSION_SECRET.test(brought)) {
    const old = await trx('sessions').first('id').where({ secret_hash: hashToken(brought) });
    if (old) await revokeSession(trx, old.id);
  }
  return createSession(trx, { userId: user.id, teamId: user.team_id, userAgent: client.userAgent }, deps.clock.now());
}

/** Signs in with an emailed link's token (used once): a sign-up link makes the team and its owner first. */
export async function signInWithLink(deps: Deps, token: string, client: Client): Promise<{ userId: number; session: NewSession }> {
  const signedIn = await deps.db.transaction(async (trx) => {
    const link = await useSignInLink(trx, token, deps.clock.now());
    if (!link) return null;
    let user: { id: number; team_id: number };
    if (link.purpose === 'sign_up') {
      const details = link.sign_up as SignUpDetails;
      if (await findUserByEmail(trx, link.email)) throw conflict('This address already has an account: ask for a sign-in link instead.');
      const team = await createTeamWithOwner(trx, { name: details.team_name, email: link.email, userName: details.name, plan: 'free', withToken: false });
      user = { id: team.userId, team_id: team.teamId };
    } else {
      user = (await findUserById(trx, link.user_id as number)) as { id: number; team_id: number };
    }
    return { userId: user.id, session: await startSession(deps, trx, client, user) };
  });
  if (!signedIn) throw httpError(401, 'This sign-in link has expired or was already used: ask for a new one.');
  return signedIn;
}

/** Signs in with email and password; a wrong one of either is the same 401, in the same time. */
export async function signInWithPassword(deps: Deps, email: string, password: string, client: Client): Promise<{ userId: number; session: NewSession }> {
  const user = await findUserByEmail(deps.db, email);
  if (!(await passwordMatches(user?.password_hash ?? null, password)) || !user) throw httpError(401, 'Wrong email or password.');
  return { userId: user.id, session: await deps.db.transaction((trx) => startSession(deps, trx, client, user)) };
}

/** The signed-in user and their team, with the session's end (null for a bearer token). */
export async function sessionOf(deps: Deps, userId: number, expiresAt: Date | null) {
  const user = await findUserById(deps.db, userId);
  if (!user) throw notFound('User');
  const team: { uid: string; name: string } = await deps.db('teams').first('uid', 'name').where({ id: user.team_id });
  return { user, team, expiresAt };
}

export type SessionView = Awaited<ReturnType<typeof sessionOf>>;

/** When the caller's session ends at the latest; null for a bearer token. */
export async function sessionEnd(deps: Deps, auth: Pick<AuthContext, 'tokenKind' | 'tokenId'>): Promise<Date | null> {
  if (auth.tokenKind !== 'session') return null;
  const row: { expires_at: string } | undefined = await deps.db('sessions').first('expires_at').where({ id: auth.tokenId });
  return row ? new Date(row.expires_at) : null;
}

/** Ends this session (a bearer token is revoked on the tokens page instead: a 409). */
export async function signOut(deps: Deps, auth: Pick<AuthContext, 'tokenKind' | 'tokenId' | 'userId'>): Promise<void> {
  if (auth.tokenKind !== 'session') throw conflict('This is a token, not a session: revoke it on the tokens page (DELETE /api/tokens/{tok}).');
  await revokeSession(deps.db, auth.tokenId);
  await deps.caches.invalidate({ kind: 'user', id: auth.userId });
}

/** Ends every session of the user, on every gateway; how many there were. */
export async function signOutEverywhere(deps: Deps, userId: number): Promise<number> {
  const revoked = await revokeUserSessions(deps.db, userId);
  await deps.caches.invalidate({ kind: 'user', id: userId });
  return revoked;
}

/**
 * Sets the user's password, or changes it given the current one (`beforeCheck` runs first:
 * the caller's attempt limit); every other session of the user ends.
 */
export async function setPassword(
  deps: Deps,
  auth: Pick<AuthContext, 'tokenKind' | 'tokenId' | 'userId'>,
  input: { password: string; current_password?: string },
  beforeCheck: () => Promise<void>,
): Promise<void> {
  const user: { password_hash: string | null } | undefined = await deps.db('users').first('password_hash').where({ id: auth.userId });
  if (user?.password_hash) {
    await beforeCheck();
    if (!input.current_password) throw validationFailed({ current_password: ['the current password is needed to change it'] });
    if (!(await passwordMatches(user.password_hash, input.current_password))) throw validationFailed({ current_password: ['is not the current password'] });
  }
  const hashed = await hashPassword(input.password);
  await deps.db.transaction(async (trx) => {
    await trx('users').where({ id: auth.userId }).update({ password_hash: hashed, updated_at: trx.fn.now() });
    await trx('sessions').where({ user_id: auth.userId }).whereNull('revoked_at').whereNot({ id: auth.tokenKind === 'session' ? auth.tokenId : 0 }).update({ revoked_at: trx.fn.now() });
  });
  await deps.caches.invalidate({ kind: 'user', id: auth.userId });
}
