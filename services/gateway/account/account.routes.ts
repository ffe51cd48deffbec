import { serialize } from 'cookie';
import Joi from 'joi';
import { sessionCookie } from '../http/sessions';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataOf, errors } from '../http/responses';
import { accepted, defineRoute, ok, type RouteSpec } from '../http/route';
import { toAccountJson } from './account.presenter';
import { accountOf, createExtensionToken, deleteTeam, revokeExtensionTokens } from './account.service';

const accountSchema = Joi.object({
  user: Joi.object({ id: Joi.string().required(), name: Joi.string().required(), email: Joi.string().required() }).required(),
  team: Joi.object({ id: Joi.string().required(), name: Joi.string().required() }).required(),
  plan: Joi.object({
    id: Joi.string().required().description('free, pro, business, unlimited, or a plan the operator added'),
    name: Joi.string().required(),
    monthly_event_limit: Joi.number().integer().allow(null).required().description("The team's limit (a per-team override wins over the plan's)"),
  }).required(),
  usage: Joi.object({
    period: Joi.string().pattern(/^\d{4}-\d{2}$/).required().description('Calendar month, UTC'),
    current: Joi.number().integer().required(),
    limit: Joi.number().integer().allow(null).required(),
    remaining: Joi.number().integer().allow(null).required(),
    is_unlimited: Joi.boolean().required(),
    limit_type: Joi.string().valid('monthly').required(),
  }).required(),
  email: Joi.object({
    sent_today: Joi.number().integer().required().description('Messages made today (UTC), skipped ones not counted'),
    per_day: Joi.number().integer().allow(null).required().description('null: no daily limit'),
    sent_this_month: Joi.number().integer().required(),
    per_month: Joi.number().integer().allow(null).required(),
    per_recipient_per_day: Joi.number().integer().allow(null).required().description('Messages one address is sent by the team in a day; more are skipped'),
  })
    .required()
    .description("The team's outgoing email and its plan's quotas"),
}).meta({ title: 'Account' });

export function accountRoutes(ctx: AppContext): RouteSpec[] {
  const tags = ['Account'];
  const cookie = sessionCookie(ctx.config);
  return [
    defineRoute({
      method: 'get',
      path: '/api/account',
      operationId: 'getAccount',
      summary: 'The user, team, plan and this month’s usage',
      description: 'The calling user, their team, the plan with its monthly event limit, how many events the team has created this calendar month (UTC), and its outgoing email against its quotas.',
      tags,
      auth: true,
      responses: { 200: { description: 'The account', body: dataOf(accountSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => {
        return ok({ data: toAccountJson(await accountOf(ctx, authOf(req))) });
      },
    }),
    defineRoute<Record<string, never>, Record<string, unknown>, { confirm: string }>({
      method: 'delete',
      path: '/api/account/team',
      operationId: 'deleteTeam',
      summary: 'Delete the team and everything it has',
      description: [
        'Owners only, and only with the team’s name in `confirm`, exactly as it is. At once: every member is removed, so every session, token and sign-in link of the team stops working (the answer also clears this browser’s session cookie); its calendars, event pages, feeds, smart links, webhooks and dynamic links stop answering (404); emails not yet sent are not sent. Invitees are not told: to send cancellations, delete the events with `notify_invitees` first.',
        'Then, after `TEAM_PURGE_DELAY_MINUTES` (default 60), a worker deletes the team’s events, RSVPs, invitees, submissions, deliveries, analytics and the team itself, in batches. There is no undo.',
      ].join('\n\n'),
      tags,
      auth: true,
      role: 'owner',
      body: Joi.object({ confirm: Joi.string().max(200).required().description('The team’s name, exactly') }),
      responses: {
        202: {
          description: 'Deleted now; its data is purged after the delay',
          body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required(), purge_after: Joi.string().isoDate().required() })),
        },
        ...errors(400, 401, 403, 413, 415, 422, 503),
      },
      handler: async ({ body }, req, res) => {
        const auth = authOf(req);
        const { teamUid, purgeAfter } = await deleteTeam(ctx, auth.teamId, body.confirm);
        if (auth.tokenKind === 'session') res.append('Set-Cookie', serialize(cookie.name, '', { httpOnly: true, secure: cookie.secure, sameSite: 'lax', path: '/', maxAge: 0 }));
        return accepted({ data: { id: `team_${teamUid}`, deleted: true, purge_after: purgeAfter.toISOString() } });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/extension/token',
      operationId: 'createExtensionToken',
      summary: 'Issue a browser-extension token for the calling user',
      description: 'The token is shown only in this answer. It acts for the same user and team as the calling token.',
      tags,
      auth: true,
      responses: {
        200: {
          description: 'The new token',
          body: dataOf(Joi.object({ token: Joi.string().required(), kind: Joi.string().valid('extension').required() })),
        },
        ...errors(401, 503),
      },
      handler: async (_input, req) => {
        const token = await createExtensionToken(ctx, authOf(req));
        return ok({ data: { token, kind: 'extension' } });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/extension/token',
      operationId: 'revokeExtensionToken',
      summary: "Revoke the calling user's extension token(s)",
      description: 'Revokes every browser-extension token of the calling user; API tokens are untouched.',
      tags,
      auth: true,
      responses: {
        200: { description: 'How many were revoked', body: dataOf(Joi.object({ revoked: Joi.number().integer().min(0).required() })) },
        ...errors(401, 503),
      },
      handler: async (_input, req) => {
        const revoked = await revokeExtensionTokens(ctx, authOf(req).userId);
        return ok({ data: { revoked } });
      },
    }),
  ];
}
