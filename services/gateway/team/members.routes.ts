import Joi from 'joi';
import { ROLES, type Role } from '../../../shared/accounts/roles';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam } from '../http/validation';
import { toMember } from './members.presenter';
import { changeRole, inviteMember, removeMember, teamMembers } from './members.service';

const memberSchema = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  email: Joi.string().required(),
  role: Joi.string()
    .valid(...ROLES)
    .required(),
  status: Joi.string().valid('active', 'invited').required().description('`invited`: invited and not signed in yet'),
  created_at: Joi.string().isoDate().required(),
  last_sign_in_at: Joi.string().isoDate().allow(null).required(),
}).meta({ title: 'Member' });


const roleField = Joi.string().valid(...ROLES);

/** The team's people and their roles. Anyone in the team reads the list; admins and owners change it. */
export function memberRoutes(ctx: AppContext): RouteSpec[] {
  const tags = ['Members'];
  const params = Joi.object({ usr: idParam('usr_') });
  return [
    defineRoute({
      method: 'get',
      path: '/api/members',
      operationId: 'listMembers',
      summary: 'The team’s members',
      description: 'Everyone in the team with their role, oldest first.',
      tags,
      auth: true,
      responses: { 200: { description: 'The members', body: dataListOf(memberSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => ok({ data: (await teamMembers(ctx, authOf(req).teamId)).map(toMember) }),
    }),
    defineRoute<Record<string, string>, Record<string, unknown>, { email: string; name?: string; role: Role }>({
      method: 'post',
      path: '/api/members',
      operationId: 'inviteMember',
      summary: 'Invite someone to the team by email',
      description:
        'Adds them with the role given and emails them a link that signs them in (it works once, within 7 days; a new one comes from the sign-in page). An address that already has an account (in any team) is a 409. Only an owner invites an owner. 403 when SIGNUP is `closed`.',
      tags,
      auth: true,
      role: 'admin',
      body: Joi.object({
        email: Joi.string().trim().lowercase().email({ tlds: false }).max(254).required(),
        name: Joi.string().trim().min(1).max(255),
        role: roleField.default('member'),
      }),
      responses: { 200: { description: 'Invited', body: dataOf(memberSchema) }, ...errors(400, 401, 409, 413, 415, 422, 503) },
      handler: async ({ body }, req) => {
        return ok({ data: toMember(await inviteMember(ctx, authOf(req), body, req.id)) });
      },
    }),
    defineRoute<{ usr: string }, Record<string, unknown>, { role: Role }>({
      method: 'put',
      path: '/api/members/:usr',
      operationId: 'updateMember',
      summary: 'Change a member’s role',
      description: 'Only an owner makes or unmakes an owner; the last owner stays one (409). The change applies to the member’s sessions and tokens at once.',
      tags,
      auth: true,
      role: 'admin',
      params,
      body: Joi.object({ role: roleField.required() }),
      responses: { 200: { description: 'Changed', body: dataOf(memberSchema) }, ...errors(400, 401, 404, 409, 413, 415, 422, 503) },
      handler: async ({ params: p, body }, req) => {
        return ok({ data: toMember(await changeRole(ctx, authOf(req), p.usr, body.role)) });
      },
    }),
    defineRoute<{ usr: string }>({
      method: 'delete',
      path: '/api/members/:usr',
      operationId: 'removeMember',
      summary: 'Remove someone from the team',
      description:
        'Their sessions and tokens stop working at once; what they made (calendars, events) stays with the team. Only an owner removes an owner; the last owner cannot be removed (409).',
      tags,
      auth: true,
      role: 'admin',
      params,
      responses: { 200: { description: 'Removed', body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) }, ...errors(401, 404, 409, 503) },
      handler: async ({ params: p }, req) => {
        await removeMember(ctx, authOf(req), p.usr);
        return ok({ data: { id: p.usr, deleted: true } });
      },
    }),
  ];
}
