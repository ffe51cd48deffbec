import { revokeTokens } from '../../shared/accounts/accounts.repository';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { ApiClient, type ApiResponse } from '../helpers/api-client';
import type { TestGateway } from '../helpers/gateway';
import { startWorker } from '../helpers/workers';
import {
  dropPrefix,
  fillPath,
  ID_KINDS,
  type IdKind,
  type Ids,
  type Operation,
  operations,
  securityPrefix,
  type Seeded,
  seedTeam,
  startSecurityGateway,
  teamDigest,
  unknownIds,
} from './fixtures';

/**
 * Every /api operation of the OpenAPI document (not a list kept by hand: a new route is
 * covered, or this file fails until it is): no token, a revoked token, a near-miss token or a
 * session that is not live is a 401; another team's ids answer exactly like ids that do not
 * exist, and change nothing, whether the caller uses an API token or a dashboard session.
 */

const NAME = 'cross_team';
let gw: TestGateway;
let worker: { close(): Promise<void> } | undefined;
let a: Seeded;
let b: Seeded;
let apiOps: Operation[];

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  worker = await startWorker(smartLinkWorker, { QUEUE_PREFIX: securityPrefix(NAME) });
  const [teamA, teamB] = await Promise.all([gw.newTeam({ plan: 'unlimited' }), gw.newTeam({ plan: 'unlimited' })]);
  [a, b] = await Promise.all([seedTeam(gw, teamA, { awaitSubmission: true }), seedTeam(gw, teamB, { awaitSubmission: true })]);
  apiOps = operations(gw.openapi).filter((op) => op.path.startsWith('/api/'));
}, 60_000);
afterAll(async () => {
  await worker?.close();
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

const EVENT = { title: 'Moved', date_start: '2031-06-01 10:00', date_end: '2031-06-01 11:00', timezone: 'UTC' };

/** A valid body for every operation that takes one, so an answer comes from who owns the ids, never from validation. */
const BODIES: Record<string, (ids: Ids) => unknown> = {
  'POST /api/calendars': () => ({ name: 'Mine', timezone: 'UTC' }),
  'PUT /api/calendars/{cal}': () => ({ name: 'Renamed', timezone: 'UTC' }),
  'POST /api/webhooks': () => ({ url: 'https://hooks.example.com/mine' }),
  'PUT /api/webhooks/{wh}': () => ({ url: 'https://hooks.example.com/moved' }),
  'POST /api/events/extract': () => ({ text: 'Lunch with Sam on 2031-05-01 at noon', timezone: 'UTC' }),
  'POST /api/events': (ids) => ({ title: 'Mine', start: '2031-06-01 10:00', calendar: ids.cal }),
  'DELETE /api/events/{evt}': () => ({}),
  'POST /api/calendars/{cal}/events': () => EVENT,
  'PUT /api/calendars/{cal}/events/{evt}': () => EVENT,
  'DELETE /api/calendars/{cal}/events/{evt}': () => ({}),
  'POST /api/calendars/{cal}/events/{evt}/signed-url': () => ({ expiry_days: 1 }),
  'POST /api/dynamic-links': () => ({ name: 'Key' }),
  'POST /api/smart-links': (ids) => ({ name: 'Form', calendar: ids.cal }),
  'PUT /api/smart-links/{sl}': (ids) => ({ name: 'Form', calendar: ids.cal }),
  'PUT /api/calendars/{cal}/subscribers/{sub}': () => ({ status: 'blocked' }),
  'POST /api/calendars/{cal}/events/{evt}/invites': () => ({ invitees: [{ email: 'new@example.com' }] }),
  'POST /api/tokens': () => ({ name: 'Mine' }),
  'POST /api/members': () => ({ email: 'joining@example.com', role: 'member' }),
  'PUT /api/members/{usr}': () => ({ role: 'member' }),
  'PUT /api/account/password': () => ({ password: 'a long enough password' }),
  // Names no team of the caller's (a valid one would delete B's team under the rest of this file): 422, nothing changed.
  'DELETE /api/account/team': () => ({ confirm: 'Not this team' }),
};

/**
 * /api operations that take no token: the dk_ key in their query is what names a team; the
 * sign-in operations name no team (sessions.test.ts covers them).
 */
const PUBLIC_API = ['GET /api/dyn', 'GET /api/dyn_ade', 'GET /api/auth/options', 'POST /api/auth/sign-in-link', 'POST /api/auth/sign-up', 'POST /api/auth/sessions'];

const usesIds = (op: Operation) => {
  const body = BODIES[op.key];
  return body !== undefined && JSON.stringify(body(unknownIds())) !== JSON.stringify(body(unknownIds()));
};

function send(op: Operation, as: ApiClient | string | null, pathIds: Record<string, string>, bodyIds: Ids): Promise<ApiResponse> {
  const body = BODIES[op.key]?.(bodyIds);
  const client = as instanceof ApiClient ? as : gw.anon.as(as);
  return client.request(op.method, fillPath(op.path, pathIds), { body });
}

/** B's two kinds of credential: its API token, and its owner's dashboard session. */
const credentials = () => [
  ['token', b.team.api],
  ['session', b.team.session],
] as const;

const leaks = (res: ApiResponse, of: Seeded) => of.uids.filter((uid) => res.text.includes(uid));

it('every /api operation of the document has a case here', () => {
  expect(apiOps.length).toBeGreaterThan(40);
  const missing: string[] = [];
  for (const op of apiOps) {
    if (!op.auth) {
      if (!PUBLIC_API.includes(op.key)) missing.push(`${op.key}: takes no token and is not a known public operation`);
      continue;
    }
    if (op.body && !BODIES[op.key]) missing.push(`${op.key}: no valid body in BODIES`);
    for (const p of op.pathParams) if (!(ID_KINDS as readonly string[]).includes(p.name)) missing.push(`${op.key}: no id of kind {${p.name}}`);
  }
  const stale = Object.keys(BODIES).filter((key) => !apiOps.some((op) => op.key === key));
  expect({ missing, stale }).toEqual({ missing: [], stale: [] });
});

it('no token, a revoked token or a near miss of a real one answers 401 on every authenticated operation, and changes nothing', async () => {
  // A revoked extension token (the API's own revocation) and a revoked API token.
  const extension = (await b.team.api.post('/api/extension/token')).body.data.token as string;
  expect((await gw.anon.as(extension).get('/api/account')).status).toBe(200);
  expect((await b.team.api.delete('/api/extension/token')).body.data.revoked).toBe(1);
  const other = await gw.newTeam({ plan: 'unlimited' });
  expect((await other.api.get('/api/account')).status).toBe(200);
  await revokeTokens(gw.db, other.userId, 'api');
  await gw.caches.invalidate({ kind: 'user', id: other.userId });

  const real = b.team.token;
  const lastChanged = real.slice(0, -1) + (real.endsWith('a') ? 'b' : 'a');
  const tokens: Array<[string, string | null]> = [
    ['no token', null],
    ['a revoked extension token', extension],
    ['a revoked API token', other.token],
    ['the last character changed', lastChanged],
    ['a prefix of the token', real.slice(0, -1)],
    ['the token with a character more', `${real}a`],
    ['the token in another case', real.replace(/[a-z]/g, (c) => c.toUpperCase())],
    ['the same secret as an extension token', real.replace(/^cst_/, 'csx_')],
  ];
  // Sessions: one signed out, one made up, and the token sent as a session cookie.
  const signedOut = await gw.newTeam({ plan: 'unlimited' });
  expect((await signedOut.session.delete('/api/session')).status).toBe(200);
  const cookies: Array<[string, ApiClient]> = [
    ['a signed-out session', signedOut.session],
    ['a made-up session', gw.anon.asSession({ cookie: `cs_session=css_${'a'.repeat(40)}`, csrf: 'x' })],
    ['the API token as a session cookie', gw.anon.asSession({ cookie: `cs_session=${real}`, csrf: 'x' })],
  ];
  const before = await teamDigest(gw.db, b.team.teamId);
  const wrong: string[] = [];
  for (const op of apiOps.filter((o) => o.auth)) {
    for (const [what, token] of [...tokens, ...cookies]) {
      // The request a valid token would have made succeed: B's own ids.
      const res = await send(op, token, b.ids, b.ids);
      const ok = res.status === 401 && res.headers.get('www-authenticate') === 'Bearer' && JSON.stringify(res.body) === '{"message":"Unauthenticated."}';
      if (!ok) wrong.push(`${op.key} with ${what}: ${res.status} ${res.headers.get('www-authenticate')} ${res.text.slice(0, 100)}`);
    }
  }
  expect(wrong).toEqual([]);
  expect(await teamDigest(gw.db, b.team.teamId)).toBe(before);
});

it("another team's ids answer exactly like unknown ids, and leave that team's data as it was", async () => {
  const before = await teamDigest(gw.db, a.team.teamId);
  const differ: string[] = [];
  const leaked: string[] = [];
  let compared = 0;
  for (const op of apiOps.filter((o) => o.auth)) {
    const names = op.pathParams.map((p) => p.name as IdKind);
    // k of the path's ids are B's own (its parents), the rest A's, against the same with unknown ids.
    const lastK = usesIds(op) ? names.length : names.length - 1;
    for (let k = 0; k <= lastK; k++) {
      const unknown = unknownIds();
      const withA: Record<string, string> = {};
      const withUnknown: Record<string, string> = {};
      names.forEach((name, i) => {
        withA[name] = i < k ? b.ids[name] : a.ids[name];
        withUnknown[name] = i < k ? b.ids[name] : unknown[name];
      });
      for (const [kind, client] of credentials()) {
        const resA = await send(op, client, withA, a.ids);
        const resUnknown = await send(op, client, withUnknown, unknown);
        compared++;
        const label = `${op.key} by ${kind} [${names.map((n, i) => `${n}:${i < k ? 'B' : 'A'}`).join(', ')}${usesIds(op) ? ', body ids: A' : ''}]`;
        const same = resA.status === resUnknown.status && JSON.stringify(resA.body) === JSON.stringify(resUnknown.body);
        if (!same) differ.push(`${label}: ${resA.status} ${resA.text.slice(0, 120)} vs unknown ${resUnknown.status} ${resUnknown.text.slice(0, 120)}`);
        else if (k < names.length && resA.status !== 404) differ.push(`${label}: ${resA.status} instead of 404`);
        if (leaks(resA, a).length) leaked.push(`${label}: ${leaks(resA, a).join(', ')}`);
      }
    }
  }
  expect(compared).toBeGreaterThan(40);
  expect({ differ, leaked }).toEqual({ differ: [], leaked: [] });
  expect(await teamDigest(gw.db, a.team.teamId)).toBe(before);
});

it("what a team reads, lists included, holds nothing of another team's", async () => {
  const before = await teamDigest(gw.db, a.team.teamId);
  const problems: string[] = [];
  for (const op of apiOps.filter((o) => o.auth && o.method === 'GET')) {
    for (const [kind, client] of credentials()) {
      const res = await send(op, client, b.ids, b.ids);
      if (res.status !== 200) problems.push(`${op.key} by ${kind}: ${res.status} ${res.text.slice(0, 120)}`);
      if (leaks(res, a).length) problems.push(`${op.key} by ${kind} shows A's ${leaks(res, a).join(', ')}`);
      // Not vacuous: B's own answer does show B's things (analytics holds counts, no ids:
      // analytics.test.ts checks that one team's counts are not another's).
      if (op.key !== 'GET /api/analytics' && !leaks(res, b).length && !res.text.includes(b.team.email)) problems.push(`${op.key} by ${kind} shows nothing of B's either: ${res.text.slice(0, 120)}`);
    }
  }
  // The lists again, filtered by another team's calendar: nothing, exactly as for a calendar that does not exist.
  const byCalendar = await b.team.api.get(`/api/events?calendar=${a.ids.cal}`);
  expect(byCalendar.body).toEqual((await b.team.api.get(`/api/events?calendar=${unknownIds().cal}`)).body);
  expect(byCalendar.body.data).toEqual([]);
  expect(problems).toEqual([]);
  expect(await teamDigest(gw.db, a.team.teamId)).toBe(before);
});

it('the public /api pages answer for a live dk_ key and 404 for one that does not exist', async () => {
  for (const key of PUBLIC_API.filter((k) => k.includes('/api/dyn'))) {
    const [, path] = key.split(' ');
    const keyParam = path === '/api/dyn' ? 'uid' : 'client';
    const query = (dk: string) => `?${keyParam}=${dk}&title=Launch&start=2031-05-08 09:00&timezone=UTC`;
    expect((await gw.anon.get(`${path}${query(a.ids.dk)}`, { headers: { Accept: 'text/html' } })).status).toBe(200);
    const unknown = await gw.anon.get(`${path}${query(unknownIds().dk)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Dynamic link not found.' });
  }
});
