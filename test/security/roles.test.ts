import { insertTokenRow } from '../../shared/accounts/accounts.repository';
import { createSession, csrfTokenOf, sessionCookie } from '../../services/gateway/http/sessions';
import { ApiClient } from '../helpers/api-client';
import type { TestGateway } from '../helpers/gateway';
import { dropPrefix, fillPath, type Operation, operations, securityPrefix, type Seeded, seedTeam, startSecurityGateway, teamDigest } from './fixtures';

/**
 * Roles, on every /api operation of the OpenAPI document (its `x-required-role`): a member,
 * with a token or a session, is refused every operation that needs admin, with the same
 * message and nothing changed, and is refused nothing else for their role. An admin is
 * refused only what needs an owner (making, changing or removing an owner).
 */
const NAME = 'roles';
let gw: TestGateway;
let seeded: Seeded;
let member: { token: ApiClient; session: ApiClient };
let apiOps: Array<Operation & { role: string }>;

const BODIES: Record<string, unknown> = {
  'POST /api/smart-links': { name: 'Form' },
  'PUT /api/smart-links/{sl}': { name: 'Form' },
  'POST /api/webhooks': { url: 'https://hooks.example.com/x' },
  'PUT /api/webhooks/{wh}': { url: 'https://hooks.example.com/y' },
  'POST /api/tokens': { name: 'Mine' },
  'POST /api/members': { email: 'someone@example.com', role: 'member' },
  'PUT /api/members/{usr}': { role: 'admin' },
};

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  const team = await gw.newTeam({ plan: 'unlimited' });
  seeded = await seedTeam(gw, team);
  const invited = await team.api.post('/api/members', { email: `mem-${Date.now()}@example.com`, role: 'member' });
  const user = await gw.db('users').first('id').where({ uid: invited.body.data.id.slice('usr_'.length) });
  const { token } = await insertTokenRow(gw.db, { userId: user.id, teamId: team.teamId, kind: 'api', name: 'member' });
  const session = await createSession(gw.db, { userId: user.id, teamId: team.teamId }, new Date());
  member = {
    token: gw.anon.as(token),
    session: gw.anon.asSession({ cookie: `${sessionCookie(gw.config).name}=${session.secret}`, csrf: csrfTokenOf(gw.config.appKey, session.secret) }),
  };
  const paths = (gw.openapi.paths ?? {}) as Record<string, Record<string, { 'x-required-role'?: string }>>;
  apiOps = operations(gw.openapi)
    .filter((op) => op.auth)
    .map((op) => ({ ...op, role: paths[op.path][op.method.toLowerCase()]['x-required-role'] ?? 'none' }));
}, 60_000);
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

it('states a role for every operation that needs a credential, and admin exactly where it belongs', () => {
  expect(apiOps.filter((op) => op.role === 'none').map((op) => op.key)).toEqual([]);
  const admin = apiOps.filter((op) => op.role === 'admin').map((op) => op.key).sort();
  expect(admin).toEqual(
    [
      'DELETE /api/members/{usr}',
      'DELETE /api/smart-links/{sl}',
      'DELETE /api/tokens/{tok}',
      'DELETE /api/webhooks/{wh}',
      'GET /api/tokens',
      'POST /api/members',
      'POST /api/smart-links',
      'POST /api/smart-links/{sl}/rotate-secret',
      'POST /api/tokens',
      'POST /api/webhooks',
      'POST /api/webhooks/{wh}/deliveries/{whd}/retry',
      'POST /api/webhooks/{wh}/rotate-secret',
      'POST /api/webhooks/{wh}/test',
      'PUT /api/members/{usr}',
      'PUT /api/smart-links/{sl}',
      'PUT /api/webhooks/{wh}',
    ].sort(),
  );
});

it('leaves deleting the team to an owner alone', () => {
  expect(apiOps.filter((op) => op.role === 'owner').map((op) => op.key)).toEqual(['DELETE /api/account/team']);
});

it('refuses a member, by token or session, every admin operation, and changes nothing', async () => {
  const before = await teamDigest(gw.db, seeded.team.teamId);
  const wrong: string[] = [];
  for (const op of apiOps.filter((o) => o.role === 'admin')) {
    for (const [kind, client] of Object.entries(member)) {
      const res = await client.request(op.method, fillPath(op.path, seeded.ids), { body: BODIES[op.key] });
      const refused = res.status === 403 && res.body.message === 'This needs the admin role in the team; yours is member.';
      if (!refused) wrong.push(`${op.key} by ${kind}: ${res.status} ${res.text.slice(0, 100)}`);
    }
  }
  expect(wrong).toEqual([]);
  expect(await teamDigest(gw.db, seeded.team.teamId)).toBe(before);
});

it('refuses a member nothing else for their role', async () => {
  const refused: string[] = [];
  for (const op of apiOps.filter((o) => o.role === 'member' && o.method === 'GET')) {
    for (const [kind, client] of Object.entries(member)) {
      const res = await client.request(op.method, fillPath(op.path, seeded.ids));
      if (res.status === 403) refused.push(`${op.key} by ${kind}: ${res.text.slice(0, 100)}`);
    }
  }
  expect(refused).toEqual([]);
});
