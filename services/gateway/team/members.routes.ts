import Joi from 'joi';
import { atLeast, ROLES, type Role } from '../../../shared/accounts/roles';
import { createSignInLink } from '../../../shared/accounts/sign-in-links';
import { conflict, forbidden, notFound } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { accountMailJob, newAccountMailJobId } from '../../../shared/queues/account-mail.job';
import type { AppContext } from '../context';
import { type AuthContext, authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam } from '../http/validation';
import { findUserByEmail } from '../../../shared/accounts/accounts.repository';
import { findMember, listMembers, type MemberRow, otherOwners } from './team.repository';

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

const toMember = (m: MemberRow) => ({
  id: `usr_${m.uid}`,
  name: m.name,
  email: m.email,
  role: m.role,
  status: m.invited_by !== null && m.last_sign_in_at === null ? 'invited' : 'active',
  created_at: new Date(m.created_at).toISOString(),
  last_sign_in_at: m.last_sign_in_at ? new Date(m.last_sign_in_at).toISOString() : null,
});

const roleField = Joi.string().valid(...ROLES);

/** Only an owner makes, changes or removes an owner. */
function checkOwnerRule(auth: AuthContext, ...roles: Role[]): void {
  if (roles.includes('owner') && !atLeast(auth.role, 'owner')) throw forbidden('Only an owner can make, change or remove an owner.');
}

/** The team's people and their roles. Anyone in the team reads the list; admins and owners change it. */
export function memberRoutes(ctx: AppContext): RouteSpec[] {
  const { db, config, clock, queues } = ctx;
  const tags = ['Members'];
  const params = Joi.object({ usr: idParam('usr_') });
  const requireMember = async (teamId: number, publicId: string) => {
    const uid = uidFromPublicId('usr_', publicId);
    const found = uid ? await findMember(db, teamId, uid) : undefined;
    if (!found) throw notFound('Member');
    return found;
  };
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
      handler: async (_input, req) => ok({ data: (await listMembers(db, authOf(req).teamId)).map(toMember) }),
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
        const auth = authOf(req);
        if (config.signup === 'closed') throw forbidden('Invitations are turned off here (SIGNUP=closed): the operator adds people.');
        checkOwnerRule(auth, body.role);
        if (await findUserByEmail(db, body.email)) throw conflict('This address already has an account.');
        const uid = newUid();
        try {
          await db.transaction(async (trx) => {
            const [user] = await trx('users')
              .insert({ uid, team_id: auth.teamId, name: body.name ?? body.email.split('@')[0], email: body.email, role: body.role, invited_by: auth.userId })
              .returning(['id']);
            const linkUid = await createSignInLink(trx, config.appKey, { purpose: 'invite', email: body.email, userId: user.id }, clock.now());
            await queues.producer(accountMailJob).add('invitation', { linkUid, meta: { requestId: req.id } }, { jobId: newAccountMailJobId() });
          });
        } catch (err) {
          if ((err as { code?: string }).code === '23505') throw conflict('This address already has an account.');
          throw err;
        }
        return ok({ data: toMember(await requireMember(auth.teamId, `usr_${uid}`)) });
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
        const auth = authOf(req);
        const member = await requireMember(auth.teamId, p.usr);
        checkOwnerRule(auth, member.role, body.role);
        await db.transaction(async (trx) => {
          if (member.role === 'owner' && body.role !== 'owner' && (await otherOwners(trx, auth.teamId, member.id)) === 0) throw conflict('The team needs an owner: make someone else owner first.');
          await trx('users').where({ id: member.id }).update({ role: body.role, updated_at: trx.fn.now() });
        });
        await ctx.caches.invalidate({ kind: 'user', id: member.id });
        return ok({ data: toMember({ ...member, role: body.role }) });
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
        const auth = authOf(req);
        const member = await requireMember(auth.teamId, p.usr);
        checkOwnerRule(auth, member.role);
        await db.transaction(async (trx) => {
          if (member.role === 'owner' && (await otherOwners(trx, auth.teamId, member.id)) === 0) throw conflict('The team needs an owner: make someone else owner first.');
          await trx('users').where({ id: member.id }).delete();
        });
        await ctx.caches.invalidate({ kind: 'user', id: member.id });
        return ok({ data: { id: p.usr, deleted: true } });
      },
    }),
  ];
}
