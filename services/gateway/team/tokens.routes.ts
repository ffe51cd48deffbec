import Joi from 'joi';
import { insertTokenRow, revokeToken } from '../../../shared/accounts/accounts.repository';
import { notFound } from '../../../shared/errors/app-error';
import { uidFromPublicId } from '../../../shared/ids/ids';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam } from '../http/validation';
import { listLiveTokens } from './team.repository';

const tokenSchema = Joi.object({
  id: Joi.string().required().description('tok_… public id (the token itself is shown only when made)'),
  kind: Joi.string().valid('api', 'extension').required(),
  name: Joi.string().allow(null).required(),
  user: Joi.object({ id: Joi.string().required(), name: Joi.string().required() }).required().description('Whose it is: it acts as this user, with their role'),
  created_at: Joi.string().isoDate().required(),
  last_used_at: Joi.string().isoDate().allow(null).required().description('Recorded at most once a minute'),
}).meta({ title: 'ApiToken' });

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());

/** The team's API and extension tokens (the API tokens page of the dashboard). Admins and owners. */
export function tokenRoutes(ctx: AppContext): RouteSpec[] {
  const { db } = ctx;
  const tags = ['API tokens'];
  return [
    defineRoute({
      method: 'get',
      path: '/api/tokens',
      operationId: 'listTokens',
      summary: 'The team’s live tokens',
      description: 'API and extension tokens not revoked, newest first, with their last use.',
      tags,
      auth: true,
      role: 'admin',
      responses: { 200: { description: 'The tokens', body: dataListOf(tokenSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => {
        const rows = await listLiveTokens(db, authOf(req).teamId);
        return ok({
          data: rows.map((t) => ({
            id: `tok_${t.uid}`,
            kind: t.kind,
            name: t.name,
            user: { id: `usr_${t.user_uid}`, name: t.user_name },
            created_at: iso(t.created_at),
            last_used_at: iso(t.last_used_at),
          })),
        });
      },
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { name: string }>({
      method: 'post',
      path: '/api/tokens',
      operationId: 'createToken',
      summary: 'Create an API token',
      description: 'The token acts as the calling user, with their role. It is in this answer only: store it now.',
      tags,
      auth: true,
      role: 'admin',
      body: Joi.object({ name: Joi.string().trim().min(1).max(100).required() }),
      responses: {
        200: { description: 'The new token, shown once', body: dataOf(tokenSchema.keys({ token: Joi.string().required() }).meta({ title: 'NewApiToken' })) },
        ...errors(400, 401, 413, 415, 422, 503),
      },
      handler: async ({ body }, req) => {
        const auth = authOf(req);
        const { token, uid } = await insertTokenRow(db, { userId: auth.userId, teamId: auth.teamId, kind: 'api', name: body.name });
        const row = (await listLiveTokens(db, auth.teamId).where('k.uid', uid))[0];
        return ok({
          data: { id: `tok_${uid}`, kind: 'api', name: body.name, user: { id: `usr_${row.user_uid}`, name: row.user_name }, created_at: iso(row.created_at), last_used_at: null, token },
        });
      },
    }),
    defineRoute<{ tok: string }>({
      method: 'delete',
      path: '/api/tokens/:tok',
      operationId: 'revokeToken',
      summary: 'Revoke a token',
      description: 'It stops working on every gateway at once. Another team’s token, or one already revoked, is a 404.',
      tags,
      auth: true,
      role: 'admin',
      params: Joi.object({ tok: idParam('tok_') }),
      responses: { 200: { description: 'Revoked', body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => {
        const uid = uidFromPublicId('tok_', params.tok);
        if (!uid) throw notFound('Token');
        const revoked = await revokeToken(db, { uid }, authOf(req).teamId);
        if (!revoked) throw notFound('Token');
        await ctx.caches.invalidate({ kind: 'user', id: revoked.userId });
        return ok({ data: { id: params.tok, deleted: true } });
      },
    }),
  ];
}
