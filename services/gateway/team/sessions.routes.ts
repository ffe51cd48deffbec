import type { Request, Response } from 'express';
import { parse as parseCookies, serialize } from 'cookie';
import Joi from 'joi';
import { csrfTokenOf, SESSION_MAX_MS, sessionCookie } from '../http/sessions';
import { type FieldErrors, tooManyRequests } from '../../../shared/errors/app-error';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { limitAddress } from '../http/client-address';
import { consumePoint, rateLimitHeaders, sharedLimiter } from '../http/rate-limits';
import { dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { toSessionJson } from './sessions.presenter';
import {
  type Client,
  requestSignInLink,
  requestSignUp,
  sessionEnd,
  sessionOf,
  setPassword,
  signInWithLink,
  signInWithPassword,
  signOut,
  signOutEverywhere,
} from './sessions.service';

const SIGN_IN_WINDOW_SECONDS = 600;
const email = Joi.string().trim().lowercase().email({ tlds: false }).max(254);
/** Long enough to resist guessing under the sign-in rate limit; short enough to hash quickly. */
const password = Joi.string().min(10).max(200);

const sessionSchema = Joi.object({
  user: Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required(),
    email: Joi.string().required(),
    role: Joi.string().valid('owner', 'admin', 'member').required(),
    has_password: Joi.boolean().required(),
  }).required(),
  team: Joi.object({ id: Joi.string().required(), name: Joi.string().required() }).required(),
  csrf_token: Joi.string().allow(null).required().description('Send it as X-CSRF-Token on every request of this session that changes something; null for a bearer token'),
  expires_at: Joi.string().isoDate().allow(null).required().description('When the session ends at the latest (it also ends after 14 days unused); null for a bearer token'),
}).meta({ title: 'Session' });

const sent = dataOf(Joi.object({ sent: Joi.boolean().valid(true).required() }));

export function sessionRoutes(ctx: AppContext): RouteSpec[] {
  const { config } = ctx;
  const tags = ['Sessions'];
  const cookie = sessionCookie(config);
  const perAddress = sharedLimiter(ctx.redis, { keyPrefix: `${config.queuePrefix}:rl:sign-in`, points: config.signInRatePer10Minutes, durationSeconds: SIGN_IN_WINDOW_SECONDS });
  const emailPoints = Math.max(1, Math.floor(config.signInRatePer10Minutes / 5));
  const perEmail = sharedLimiter(ctx.redis, { keyPrefix: `${config.queuePrefix}:rl:sign-in-email`, points: emailPoints, durationSeconds: SIGN_IN_WINDOW_SECONDS });

  /** One attempt from this client (and, when given, for this address), or a 429. */
  const takeAttempt = async (req: Request, res: Response, address?: string) => {
    const byClient = await consumePoint(perAddress, limitAddress(req.ip));
    rateLimitHeaders(res, config.signInRatePer10Minutes, byClient.state, byClient.over);
    if (byClient.over) throw tooManyRequests(Math.max(1, Math.ceil(byClient.state.msBeforeNext / 1000)));
    if (address) {
      const byEmail = await consumePoint(perEmail, address);
      if (byEmail.over) {
        rateLimitHeaders(res, emailPoints, byEmail.state, true);
        throw tooManyRequests(Math.max(1, Math.ceil(byEmail.state.msBeforeNext / 1000)));
      }
    }
  };

  const setCookie = (res: Response, secret: string, maxAgeSeconds: number) =>
    res.append('Set-Cookie', serialize(cookie.name, secret, { httpOnly: true, secure: cookie.secure, sameSite: 'lax', path: '/', maxAge: maxAgeSeconds }));

  /** What a sign-in needs of the request. */
  const clientOf = (req: Request): Client => ({
    broughtSecret: req.headers.cookie ? parseCookies(req.headers.cookie)[cookie.name] : undefined,
    userAgent: req.get('user-agent'),
  });
  /** The new session's cookie, and its answer (never cached). */
  const signedIn = async (res: Response, { userId, session }: Awaited<ReturnType<typeof signInWithLink>>) => {
    setCookie(res, session.secret, SESSION_MAX_MS / 1000);
    res.set('Cache-Control', 'no-store');
    return ok({ data: toSessionJson(await sessionOf(ctx, userId, session.expiresAt), csrfTokenOf(config.appKey, session.secret)) });
  };

  return [
    defineRoute({
      method: 'get',
      path: '/api/auth/options',
      operationId: 'getSignInOptions',
      summary: 'How people may sign in and sign up here',
      description: '`signup`: `open` (anyone may create a team), `invite` (people join when invited; teams come from the operator), `closed` (no sign-up, no invitations).',
      tags,
      auth: false,
      responses: {
        200: {
          description: 'The options',
          body: dataOf(Joi.object({ signup: Joi.string().valid('open', 'invite', 'closed').required(), password_sign_in: Joi.boolean().required() })),
        },
      },
      handler: async () => ok({ data: { signup: config.signup, password_sign_in: true } }),
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { email: string }>({
      method: 'post',
      path: '/api/auth/sign-in-link',
      operationId: 'requestSignInLink',
      summary: 'Email a one-time sign-in link',
      description: `The address is sent a link to the dashboard that signs in once, within 15 minutes. The answer is the same whether or not the address has an account (nobody learns who does). SIGN_IN_RATE_PER_10_MINUTES requests per client address in ${SIGN_IN_WINDOW_SECONDS / 60} minutes, a fifth of it per email address (429 beyond).`,
      tags,
      auth: false,
      body: Joi.object({ email: email.required() }),
      responses: { 202: { description: 'Sent, if the address has an account', body: sent }, ...errors(400, 413, 415, 422, 429, 503) },
      handler: async ({ body }, req, res) => {
        await takeAttempt(req, res, body.email);
        await requestSignInLink(ctx, body.email, req.id);
        return { status: 202, body: { data: { sent: true } } };
      },
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { email: string; name: string; team_name: string }>({
      method: 'post',
      path: '/api/auth/sign-up',
      operationId: 'signUp',
      summary: 'Create a team (when sign-up is open)',
      description:
        'Emails the address a link; the team and its owner are made when the link is used (within an hour), so nobody can take an address they cannot read. An address that already has an account is sent a sign-in link instead, with the same answer. 403 unless SIGNUP is `open`.',
      tags,
      auth: false,
      body: Joi.object({ email: email.required(), name: Joi.string().trim().min(1).max(255).required(), team_name: Joi.string().trim().min(1).max(255).required() }),
      responses: { 202: { description: 'Sent', body: sent }, ...errors(400, 403, 413, 415, 422, 429, 503) },
      handler: async ({ body }, req, res) => {
        await requestSignUp(ctx, body, req.id, () => takeAttempt(req, res, body.email));
        return { status: 202, body: { data: { sent: true } } };
      },
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { token?: string; email?: string; password?: string }>({
      method: 'post',
      path: '/api/auth/sessions',
      operationId: 'signIn',
      summary: 'Sign in: with an emailed link’s token, or an email and password',
      description:
        'Sets the session cookie (HttpOnly, SameSite=Lax; Secure on https) and answers the session with its CSRF token. A link works once and expires; a new session is made at every sign-in and the one the browser brought, if any, ends. Counts against the sign-in rate limits.',
      tags,
      auth: false,
      body: Joi.object({
        token: Joi.string().max(200).description('From the emailed link (after `#token=`)'),
        email: email.description('With `password`, instead of a token'),
        password: Joi.string().max(200),
      }),
      check: ({ body }): FieldErrors => {
        if (body.token !== undefined && (body.email !== undefined || body.password !== undefined)) return { token: ['give the link’s token, or email and password, not both'] };
        if (body.token === undefined && (body.email === undefined || body.password === undefined)) {
          return body.email === undefined ? { email: ['give the link’s token, or email and password'] } : { password: ['is required with email'] };
        }
        return {};
      },
      responses: { 200: { description: 'Signed in', body: dataOf(sessionSchema) }, ...errors(400, 401, 409, 413, 415, 422, 429, 503) },
      handler: async ({ body }, req, res) => {
        await takeAttempt(req, res, body.email);
        const client = clientOf(req);
        return signedIn(res, body.token ? await signInWithLink(ctx, body.token, client) : await signInWithPassword(ctx, body.email as string, body.password as string, client));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/session',
      operationId: 'getSession',
      summary: 'Who is signed in, and the session’s CSRF token',
      description: 'For a dashboard session: the user (with their role), the team, the CSRF token to send as X-CSRF-Token, and when the session ends. A bearer token gets the same without the session fields.',
      tags,
      auth: true,
      responses: { 200: { description: 'The session', body: dataOf(sessionSchema) }, ...errors(401, 503) },
      handler: async (_input, req, res) => {
        const auth = authOf(req);
        res.set('Cache-Control', 'no-store');
        const view = await sessionOf(ctx, auth.userId, await sessionEnd(ctx, auth));
        return ok({ data: toSessionJson(view, auth.sessionSecret ? csrfTokenOf(config.appKey, auth.sessionSecret) : null) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/session',
      operationId: 'signOut',
      summary: 'Sign out (this session)',
      description: 'Ends the session and clears its cookie. Only for a dashboard session (a bearer token is revoked on the tokens page).',
      tags,
      auth: true,
      responses: { 200: { description: 'Signed out', body: dataOf(Joi.object({ signed_out: Joi.boolean().valid(true).required() })) }, ...errors(401, 409, 503) },
      handler: async (_input, req, res) => {
        const auth = authOf(req);
        await signOut(ctx, auth);
        setCookie(res, '', 0);
        return ok({ data: { signed_out: true } });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/session/revoke-all',
      operationId: 'signOutEverywhere',
      summary: 'Sign out everywhere',
      description: 'Ends every session of the calling user, on every browser (this one too). API tokens are untouched.',
      tags,
      auth: true,
      responses: { 200: { description: 'How many sessions ended', body: dataOf(Joi.object({ revoked: Joi.number().integer().min(0).required() })) }, ...errors(401, 503) },
      handler: async (_input, req, res) => {
        const auth = authOf(req);
        const revoked = await signOutEverywhere(ctx, auth.userId);
        if (auth.tokenKind === 'session') setCookie(res, '', 0);
        return ok({ data: { revoked } });
      },
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { password: string; current_password?: string }>({
      method: 'put',
      path: '/api/account/password',
      operationId: 'setPassword',
      summary: 'Set or change the calling user’s password',
      description:
        'Optional: the emailed link always works. 10 to 200 characters, stored as argon2id. Changing a password needs the current one; every other session of the user ends.',
      tags,
      auth: true,
      body: Joi.object({ password: password.required(), current_password: Joi.string().max(200) }),
      responses: { 200: { description: 'Set', body: dataOf(Joi.object({ has_password: Joi.boolean().valid(true).required() })) }, ...errors(400, 401, 403, 413, 415, 422, 429, 503) },
      handler: async ({ body }, req, res) => {
        const auth = authOf(req);
        await setPassword(ctx, auth, body, () => takeAttempt(req, res));
        return ok({ data: { has_password: true } });
      },
    }),
  ];
}
