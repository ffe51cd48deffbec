import Joi from 'joi';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam } from '../http/validation';
import { toTokenJson } from './tokens.presenter';
import { createApiToken, liveTokens, revokeToken } from './tokens.service';

const tokenSchema = Joi.object({
  id: Joi.string().required().description('tok_… public id (the token itself is shown only when made)'),
  kind: Joi.string().valid('api', 'extension').required(),
  name: Joi.string().allow(null).required(),
  user: Joi.object({ id: Joi.string().required(), name: Joi.string().required() }).required().description('Whose it is: it acts as this user, with their role'),
  created_at: Joi.string().isoDate().required(),
  last_used_at: Joi.string().isoDate().allow(null).required().description('Recorded at most once a minute'),
}).meta({ title: 'ApiToken' });

/** The team's API and extension tokens (the API tokens page of the dashboard). Admins and owners. */
export function tokenRoutes(ctx: AppContext): RouteSpec[] {
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
        return ok({ data: (await liveTokens(ctx, authOf(req).teamId)).map(toTokenJson) });
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
        const { row, token } = await createApiToken(ctx, authOf(req), body.name);
        return ok({ data: { ...toTokenJson(row), token } });
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
        await revokeToken(ctx, authOf(req).teamId, params.tok);
        return ok({ data: { id: params.tok, deleted: true } });
      },
    }),
  ];
}
