import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { crash, isolatedPrefix, spawnGateway } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { newLink, outcomeOf, startSmartLinkWorker, submitForm } from '../smart-links/helpers';

/**
 * Analytics counts what people and bots did, exactly, whichever gateway served them: a known
 * sequence of visits through real HTTP to two gateway processes, their counts written when
 * each is stopped with SIGTERM, then read through the API of a third.
 */
jest.setTimeout(60_000);

const PERSON = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const env = { QUEUE_PREFIX: isolatedPrefix('analytics') };
let reader: TestGateway;
let team: TestTeam;
let calendar: { public_id: string; uid: string };
let event: { public_id: string; uid: string };
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  reader = await startGateway(env);
  team = await reader.newTeam();
  calendar = (await team.api.post('/api/calendars', { name: 'Counted', timezone: 'UTC' })).body.data;
  event = (
    await team.api.post(`/api/calendars/${calendar.public_id}/events`, {
      title: 'Launch party',
      date_start: '2031-05-01 18:00',
      date_end: '2031-05-01 21:00',
      timezone: 'UTC',
      has_rsvp: true,
    })
  ).body.data;
});
afterAll(() => reader.close());

const visit = (gw: { baseUrl: string }, path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${gw.baseUrl}${path}`, { redirect: 'manual', ...init, headers: { 'User-Agent': PERSON, Accept: 'text/html', ...headers, ...(init.headers as Record<string, string>) } }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

const read = async (query: string) => {
  const res = await team.api.get(`/api/analytics?${query}`);
  expect(res.status).toBe(200);
  return res.body as { data: Array<Record<string, string | number>>; meta: { totals: Record<string, number> } };
};

it('counts views, adds by platform, RSVPs and bots exactly across two gateway processes stopped with SIGTERM, with referrer and UTM', async () => {
  // Two gateways as `npm start` runs them, each its own process, stopped as an orchestrator stops them.
  const a = await spawnGateway(env);
  const b = await spawnGateway(env);
  const stopped = async () => {
    for (const gw of [a, b]) gw.proc.kill('SIGTERM');
    expect((await Promise.all([a.exited, b.exited])).map((x) => x.code)).toEqual([0, 0]);
  };
  try {
    const e = `/e/${event.uid}`;
    // Views: 3 on A (one from a newsletter link), 2 on B, one by a bot; the calendar page once.
    expect(await visit(a, `${e}?utm_source=newsletter&utm_medium=email&utm_campaign=may`, { Referer: 'https://news.example.com/issue/12' })).toBe(200);
    expect(await visit(a, e)).toBe(200);
    expect(await visit(a, e)).toBe(200);
    expect(await visit(b, e)).toBe(200);
    expect(await visit(b, e)).toBe(200);
    expect(await visit(a, e, { 'User-Agent': GOOGLEBOT })).toBe(200);
    expect(await visit(b, `/c/${calendar.uid}`)).toBe(200);
    // Adds: Google twice, an .ics download, Apple, and `auto` on an iPhone (counted as what it chose: Apple).
    expect(await visit(a, `${e}/google`)).toBe(302);
    expect(await visit(b, `${e}/google`)).toBe(302);
    expect(await visit(a, `${e}/ics`)).toBe(200);
    expect(await visit(b, `${e}/apple`)).toBe(200);
    expect(await visit(a, `${e}/auto`, { 'User-Agent': IPHONE })).toBe(200);
    // An RSVP (received: its key goes to the address by email).
    expect(await visit(b, `${e}/rsvp`, { 'Content-Type': 'application/json', Accept: 'application/json' }, { method: 'POST', body: JSON.stringify({ name: 'Ada', email: 'ada-analytics@example.com', answer: 'yes' }) })).toBe(202);
    await stopped();
  } finally {
    await Promise.all([crash(a), crash(b)]);
  }

  const byDay = await read(`event=${event.public_id}`);
  expect(byDay.data).toEqual([{ date: today(), views: 5, adds: 5, feed_fetches: 0, rsvps: 1, submissions: 0 }]);
  expect((await read(`calendar=${calendar.public_id}`)).meta.totals).toEqual({ views: 6, adds: 5, feed_fetches: 0, rsvps: 1, submissions: 0 });
  expect((await read(`event=${event.public_id}&bots=true`)).meta.totals).toEqual({ views: 1, adds: 0, feed_fetches: 0, rsvps: 0, submissions: 0 });

  const byPlatform = await read(`event=${event.public_id}&group_by=platform`);
  expect(byPlatform.data.filter((r) => r.adds).map((r) => [r.platform, r.adds])).toEqual([
    ['apple', 2],
    ['google', 2],
    ['ics', 1],
  ]);
  expect(byPlatform.data.filter((r) => r.rsvps).map((r) => [r.platform, r.rsvps])).toEqual([['yes', 1]]);
  const byReferrer = await read(`event=${event.public_id}&group_by=referrer`);
  expect(byReferrer.data.filter((r) => r.views).map((r) => [r.referrer, r.views])).toEqual([
    ['', 4],
    ['news.example.com', 1],
  ]);
  const bySource = await read(`event=${event.public_id}&group_by=utm_source`);
  expect(bySource.data.filter((r) => r.views).map((r) => [r.utm_source, r.views])).toEqual([
    ['', 4],
    ['newsletter', 1],
  ]);
  // The event's own read carries the same figures when asked.
  const withStats = await team.api.get(`/api/calendars/${calendar.public_id}/events/${event.public_id}?with_stats=true`);
  expect(withStats.body.stats).toEqual({ views: 5, adds: { apple: 2, google: 2, ics: 1 }, rsvps: { yes: 1 }, submissions: {} });
  expect((await team.api.get(`/api/events/${event.public_id}`)).body.stats).toBeUndefined();
  // No address is stored: the table has none, only counts.
  const columns = (await reader.db.raw("SELECT column_name FROM information_schema.columns WHERE table_name = 'analytics_daily'")).rows.map((r: { column_name: string }) => r.column_name);
  expect(columns.filter((c: string) => /ip|address|cookie|agent/.test(c))).toEqual([]);
});

it('counts fetches of the public calendar feed as feed fetches of platform public, bots apart', async () => {
  const own = await reader.newTeam();
  const cal = (await own.api.post('/api/calendars', { name: 'Feed counted', timezone: 'UTC' })).body.data;
  const gw = await startGateway(env);
  // The first fetch builds the feed, the next two are served from the cache: each is counted.
  for (let i = 0; i < 3; i++) expect(await visit(gw, `/c/${cal.uid}.ics`, { Accept: 'text/calendar' })).toBe(200);
  expect(await visit(gw, `/c/${cal.uid}.ics`, { Accept: 'text/calendar', 'User-Agent': GOOGLEBOT })).toBe(200);
  await gw.close();
  const byPlatform = (await own.api.get(`/api/analytics?calendar=${cal.public_id}&group_by=platform`)).body;
  expect(byPlatform.data.filter((r: Record<string, number>) => r.feed_fetches).map((r: Record<string, unknown>) => [r.platform, r.feed_fetches])).toEqual([['public', 3]]);
  expect((await own.api.get(`/api/analytics?calendar=${cal.public_id}&bots=true`)).body.meta.totals.feed_fetches).toBe(1);
});

it('counts smart-link submissions by outcome, on the day they were received, under their event', async () => {
  const worker = await startSmartLinkWorker(env);
  try {
    const limited = await reader.newTeam({ eventLimit: 1 });
    const cal = (await limited.api.post('/api/calendars', { name: 'Form', timezone: 'UTC' })).body.data;
    const { link } = await newLink(reader, limited, {}, cal);
    const form = { title: 'Open day', start: '2031-06-01 10:00' };
    // Processed, then the same content again (a duplicate of that event), then one past the plan's limit (failed).
    const sent = [await submitForm(link.url, form)];
    expect(sent[0].status).toBe(202);
    const made = await outcomeOf(limited, sent[0].body.data.id);
    sent.push(await submitForm(link.url, form), await submitForm(link.url, { title: 'Over the limit', start: '2031-06-02 10:00' }));
    expect((await Promise.all(sent.map((s) => outcomeOf(limited, s.body.data.id)))).map((o) => o.status)).toEqual(['processed', 'duplicate', 'failed']);
    const counted = (await limited.api.get(`/api/analytics?calendar=${cal.public_id}&group_by=platform`)).body;
    expect(counted.data.filter((r: Record<string, number>) => r.submissions).map((r: Record<string, unknown>) => [r.platform, r.submissions])).toEqual([
      ['duplicate', 1],
      ['failed', 1],
      ['processed', 1],
    ]);
    expect(counted.meta.totals).toEqual({ views: 0, adds: 0, feed_fetches: 0, rsvps: 0, submissions: 3 });
    expect((await limited.api.get(`/api/analytics?calendar=${cal.public_id}`)).body.data).toEqual([{ date: today(), views: 0, adds: 0, feed_fetches: 0, rsvps: 0, submissions: 3 }]);
    // The two that made or repeated the event are that event's; the failed one is the calendar's alone.
    const stats = (await limited.api.get(`/api/events/${made.event_public_id}?with_stats=true`)).body.stats;
    expect(stats).toEqual({ views: 0, adds: {}, rsvps: {}, submissions: { processed: 1, duplicate: 1 } });
  } finally {
    await worker.close();
  }
});

it('writes what a gateway counted when it is stopped with SIGTERM', async () => {
  const gw = await spawnGateway(env);
  try {
    for (let i = 0; i < 3; i++) expect(await visit(gw, `/e/${event.uid}/google`)).toBe(302);
    const before = (await read(`event=${event.public_id}&group_by=platform`)).data.find((r) => r.platform === 'google')?.adds ?? 0;
    gw.proc.kill('SIGTERM');
    await gw.exited;
    await waitFor(async () => (await read(`event=${event.public_id}&group_by=platform`)).data.find((r) => r.platform === 'google')?.adds === Number(before) + 3, { what: 'the three adds' });
  } finally {
    await crash(gw);
  }
});

it('refuses a span longer than a year and an unknown event, with the documented errors', async () => {
  const long = await team.api.get('/api/analytics?from=2024-01-01&to=2025-06-01');
  expect(long.status).toBe(422);
  expect(Object.keys(long.body.errors)).toEqual(['from']);
  const backwards = await team.api.get('/api/analytics?from=2025-06-02&to=2025-06-01');
  expect(backwards.status).toBe(422);
  // Days that do not exist: Postgres would refuse them (a 500), and an unreadable one broke the default span.
  for (const query of ['from=2025-02-30&to=2025-03-01', 'to=2025-13-45', 'to=2025-02-29']) {
    const res = await team.api.get(`/api/analytics?${query}`);
    expect([query, res.status, Object.keys(res.body.errors ?? {})]).toEqual([query, 422, [query.startsWith('from') ? 'from' : 'to']]);
  }
  const other = await reader.newTeam();
  expect((await other.api.get(`/api/analytics?event=${event.public_id}`)).status).toBe(404);
  expect((await other.api.get(`/api/analytics?calendar=${calendar.public_id}`)).status).toBe(404);
  // Another team reads its own counts only: none of this team's.
  const theirs = await other.api.get('/api/analytics');
  expect(theirs.body.meta.totals).toEqual({ views: 0, adds: 0, feed_fetches: 0, rsvps: 0, submissions: 0 });
  expect((await read('')).meta.totals.views).toBeGreaterThan(0);
});
