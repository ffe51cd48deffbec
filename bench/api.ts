import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_CONNECTIONS, load, warm, type LoadOptions, type LoadResult } from './lib/load';
import { DIST, serviceArgv, startProcess } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase, seedEvents } from './lib/setup';
import { createSession, sessionCookie } from '../services/gateway/http/sessions';

const EVENTS = Number(process.env.BENCH_API_EVENTS ?? 200_000);

/**
 * bench/api: 200k events in one team; single-event GET, a 50-event upcoming page, a search
 * page and a create, each against a bare Express 5 app answering the same JSON from memory.
 */
export async function benchApi(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('api');
  const team = await benchTeam(db);
  const gateway = await startProcess(serviceArgv('gateway'), benchEnv(url), '/readyz');
  const auth = { Authorization: `Bearer ${team.token}`, 'Content-Type': 'application/json' };
  let baseline: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const cal = (await (await fetch(`${gateway.url}/api/calendars`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Bench', timezone: 'America/New_York' }) })).json()) as {
      data: { uid: string; public_id: string };
    };
    const calRow = await db('calendars').where({ uid: cal.data.uid }).first('id');
    console.error(`bench/api: seeding ${EVENTS} events…`);
    await seedEvents(db, team.teamId, calRow.id, EVENTS);
    await db.raw('VACUUM ANALYZE events');
    const sample = (await db('events').where({ team_id: team.teamId }).orderByRaw('random()').limit(1000).pluck('uid')).map((u: string) => `evt_${u}`);

    const createBody = JSON.stringify({ title: 'Bench create', date_start: '2027-03-10 10:00', date_end: '2027-03-10 11:00', timezone: 'America/New_York' });
    const get = async (p: string) => (await (await fetch(gateway.url + p, { headers: auth })).json()) as { data: unknown[] };
    const single = await get(`/api/events/${sample[0]}`);
    const upcoming = await get('/api/events?range=upcoming&per_page=50');
    const search = await get('/api/events?search=summit&per_page=50');
    const created = await (await fetch(`${gateway.url}/api/calendars/${cal.data.public_id}/events`, { method: 'POST', headers: auth, body: createBody })).json();
    if (upcoming.data.length !== 50 || search.data.length === 0) throw new Error('bench/api: unexpected seed result');

    const routesFile = path.join(os.tmpdir(), `bench-api-routes-${process.pid}.json`);
    fs.writeFileSync(
      routesFile,
      JSON.stringify([
        { method: 'GET', path: '/api/events/:evt', body: single },
        { method: 'GET', path: '/api/events', query: { search: 'summit' }, body: search },
        { method: 'GET', path: '/api/events', body: upcoming },
        { method: 'POST', path: '/api/calendars/:cal/events', body: created },
      ]),
    );
    baseline = await startProcess([path.join(DIST, 'bench/baselines/express-json.js'), routesFile], {}, '/healthz');

    let n = 0;
    const randomEvent = () => ({ path: `/api/events/${sample[n++ % sample.length]}` });
    const randomRead = (req: { body?: string }) => ({ ...req, ...randomEvent() });
    const scenarios: Array<{ name: string; opts: (base: string) => LoadOptions }> = [
      {
        name: 'GET /api/events/{evt}',
        opts: (base) => ({ url: `${base}/api/events/${sample[0]}`, headers: auth, setupRequest: (req) => ({ ...req, ...randomEvent() }) }),
      },
      { name: 'GET /api/events?range=upcoming&per_page=50', opts: (base) => ({ url: `${base}/api/events?range=upcoming&per_page=50`, headers: auth }) },
      { name: 'GET /api/events?search=summit', opts: (base) => ({ url: `${base}/api/events?search=summit&per_page=50`, headers: auth }) },
      { name: 'POST /api/calendars/{cal}/events', opts: (base) => ({ url: `${base}/api/calendars/${cal.data.public_id}/events`, method: 'POST', headers: auth, body: createBody }) },
    ];

    const rows: BenchRow[] = [];
    for (const s of scenarios) {
      await warm(s.opts(gateway.url));
      const ours = await load(s.opts(gateway.url));
      await warm(s.opts(baseline.url));
      const base = await load(s.opts(baseline.url));
      check(s.name, ours);
      const rpsGoal = s.name.startsWith('GET /api/events/{evt}') ? 0.5 : s.name.includes('range=upcoming') ? 0.2 : undefined;
      rows.push(row('api', `${s.name} req/s`, ours.rps, base.rps, 'req/s', rpsGoal ? { atLeast: rpsGoal } : { text: 'reported' }));
      rows.push(row('api', `${s.name} p50`, ours.p50, base.p50, 'ms', { text: 'reported' }));
      rows.push(row('api', `${s.name} p99`, ours.p99, base.p99, 'ms', { atMost: 3 }));
    }
    // The dashboard's credential beside the API's: the same read with a session cookie, and
    // with the bearer token again right before it (the baseline of this pair).
    const session = await createSession(db, { userId: team.userId, teamId: team.teamId }, new Date());
    const cookie = { Cookie: `${sessionCookie({ nodeEnv: 'production', publicBaseUrl: gateway.url }).name}=${session.secret}` };
    const byToken = { url: `${gateway.url}/api/events/${sample[0]}`, headers: auth, setupRequest: randomRead };
    const bySession = { url: `${gateway.url}/api/events/${sample[0]}`, headers: cookie, setupRequest: randomRead };
    await warm(byToken);
    const tokenRun = await load(byToken);
    await warm(bySession);
    const sessionRun = await load(bySession);
    check('GET /api/events/{evt} with a session', sessionRun);
    rows.push(row('api', 'GET /api/events/{evt} with a dashboard session req/s (baseline: the same with a bearer token)', sessionRun.rps, tokenRun.rps, 'req/s', { atLeast: 0.9 }));
    fs.rmSync(routesFile, { force: true });
    console.error(`bench/api: ${EVENTS} events, ${BENCH_CONNECTIONS} connections`);
    return rows;
  } finally {
    await gateway.stop();
    await baseline?.stop();
    await db.destroy();
  }
}

function check(name: string, r: LoadResult): void {
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`bench/api ${name}: ${r.errors} errors, ${r.non2xx} non-2xx (${JSON.stringify(r.statusCounts)})`);
}
