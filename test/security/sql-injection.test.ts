import type { ApiResponse } from '../helpers/api-client';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { dropPrefix, fillPath, type Operation, operations, securityPrefix, type Seeded, seedTeam, startSecurityGateway, teamDigest } from './fixtures';
import { encode, SQL_INJECTIONS } from './hostile';

/**
 * SQL injection strings in every query parameter of every operation that takes one (the
 * lists, and the public pages that read their query): the answer is 200 with the caller's
 * own, correct rows or a 422, never a 5xx and never another team's rows; the tables are
 * still there afterwards. LIKE wildcards in `search` match themselves.
 */

const NAME = 'sqli';
let gw: TestGateway;
let a: Seeded;
let b: Seeded;
let queried: Operation[];

/** Titles whose characters mean something to SQL and to LIKE. */
const TITLES = ['100% sure', 'under_score', 'back\\slash', "O'Brien's party", 'plain words', 'quote " and semicolon;', '%_\\'];

async function withTitles(team: TestTeam, seeded: Seeded): Promise<Map<string, string>> {
  const made = new Map<string, string>();
  for (const title of TITLES) {
    const res = await team.api.post(`/api/calendars/${seeded.ids.cal}/events`, { title, internal_name: `in ${title}`, date_start: '2031-04-01 10:00', date_end: '2031-04-01 11:00', timezone: 'UTC' });
    expect(res.status).toBe(200);
    made.set(res.body.data.public_id, title);
  }
  return made;
}

let titlesOfB: Map<string, string>;

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  const [teamA, teamB] = await Promise.all([gw.newTeam({ plan: 'unlimited' }), gw.newTeam({ plan: 'unlimited' })]);
  [a, b] = await Promise.all([seedTeam(gw, teamA), seedTeam(gw, teamB)]);
  await withTitles(teamA, a);
  titlesOfB = await withTitles(teamB, b);
  queried = operations(gw.openapi).filter((op) => op.method === 'GET' && op.query.length > 0);
});
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

const TABLES = ['teams', 'users', 'api_tokens', 'calendars', 'events', 'short_links', 'team_usage', 'plans', 'extractions', 'invitees', 'deliveries', 'rsvps', 'subscribers', 'smart_links', 'smart_link_submissions', 'dynamic_links'];

/** Valid values for the other parameters of public operations (their required ones). */
const PUBLIC_QUERY: Record<string, (s: Seeded) => Record<string, string>> = {
  'GET /api/dyn': (s) => ({ uid: s.ids.dk, title: 'Launch', start: '2031-05-08 09:00' }),
  'GET /api/dyn_ade': (s) => ({ client: s.ids.dk, title: 'Launch', start: '05/08/2031 09:00 AM' }),
  // The answer link: the key is the only parameter, and injected ones open nothing (404).
  'GET /e/{uid}/rsvp': () => ({}),
  // An email's answer button and opt-outs: signed for one person, so injected values open
  // nothing.
  'GET /e/{uid}/reply': () => ({ answer: 'yes' }),
  'GET /e/{uid}/reminders/unsubscribe': () => ({ email: 'ann@example.com' }),
  'GET /e/{uid}/unsubscribe': () => ({ email: 'ann@example.com' }),
  // The public pages: a language and a page number, read as a word and an integer or refused.
  'GET /e/{uid}': () => ({}),
  'GET /c/{uid}': () => ({}),
  'GET /c/{uid}/embed': () => ({}),
};

function send(op: Operation, param: string, value: string): Promise<ApiResponse> {
  const base = PUBLIC_QUERY[op.key]?.(b) ?? {};
  const query = Object.entries({ ...base, [param]: value })
    .map(([k, v]) => `${k}=${encode(v)}`)
    .join('&');
  const client = op.auth ? b.team.api : gw.anon;
  return client.get(`${fillPath(op.path, { ...b.ids, uid: b.event.uid })}?${query}`, { headers: { Accept: 'application/json' } });
}

it('covers every operation with query parameters', () => {
  expect(queried.map((op) => op.key).sort()).toEqual(
    expect.arrayContaining(['GET /api/events', 'GET /api/calendars/{cal}/events', 'GET /api/smart-links/{sl}/submissions', 'GET /api/calendars/{cal}/subscribers', 'GET /api/dyn']),
  );
  for (const op of queried.filter((o) => !o.auth)) expect(PUBLIC_QUERY[op.key]).toBeDefined();
});

it("every filter takes injection strings: 200 with the caller's own rows or 422, never a 5xx or another team's rows", async () => {
  const digestA = await teamDigest(gw.db, a.team.teamId);
  const problems: string[] = [];
  let sent = 0;
  for (const op of queried) {
    for (const param of op.query) {
      for (const payload of SQL_INJECTIONS) {
        const res = await send(op, param.name, payload);
        sent++;
        const where = `${op.key} ?${param.name}=${JSON.stringify(payload)}`;
        // A public signed link refuses a forged signature with its documented 403.
        const refusedSignature = res.status === 403 && !op.auth && op.statuses.includes(403);
        if ((![200, 302, 404, 422].includes(res.status) && !refusedSignature) || (res.status === 404 && op.auth)) problems.push(`${where}: ${res.status} ${res.text.slice(0, 120)}`);
        const leaked = a.uids.filter((uid) => res.text.includes(uid));
        if (leaked.length) problems.push(`${where} shows the other team's ${leaked.join(', ')}`);
      }
    }
  }
  expect(sent).toBeGreaterThan(300);
  expect(problems).toEqual([]);
  expect(await teamDigest(gw.db, a.team.teamId)).toBe(digestA);
  const { rows } = await gw.db.raw(`SELECT ${TABLES.map((t) => `to_regclass('public.${t}') IS NOT NULL AS "${t}"`).join(', ')}`);
  expect(Object.entries(rows[0]).filter(([, exists]) => !exists)).toEqual([]);
});

it('search matches %, _, \\ and quotes as themselves, in titles and internal names, and only in the caller\'s events', async () => {
  const titles = (res: ApiResponse) => (res.body.data as Array<{ public_id: string; title: string }>).map((e) => e.title).sort();
  const expected = (needle: string) => TITLES.filter((t) => t.includes(needle) || `in ${t}`.includes(needle)).sort();
  for (const needle of ['%', '_', '\\', "'", '"', ';', "O'Brien", '100%', '%_\\', 'in ']) {
    for (const path of ['/api/events', `/api/calendars/${b.ids.cal}/events`]) {
      const res = await b.team.api.get(`${path}?search=${encode(needle)}&per_page=200`);
      expect(res.status).toBe(200);
      const own = titles(res).filter((t) => TITLES.includes(t));
      expect([needle, own]).toEqual([needle, expected(needle)]);
      const foreign = (res.body.data as Array<{ public_id: string; title: string }>).filter((e) => TITLES.includes(e.title) && !titlesOfB.has(e.public_id));
      expect(foreign).toEqual([]);
      expect(a.uids.filter((uid) => res.text.includes(uid))).toEqual([]);
    }
  }
});
