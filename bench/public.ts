import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load, warm, type LoadOptions, type LoadResult } from './lib/load';
import { DIST, serviceArgv, startProcess } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { FEED_WINDOW } from '../services/gateway/public/calendar-feed';
import { benchEnv, benchTeam, freshDatabase, seedEvents } from './lib/setup';

const SEEDED_EVENTS = Number(process.env.BENCH_FEED_EVENTS ?? 10_000);
/** The feed holds at most this many of them (its window at its widest; most of the seeded events are to come). */
const FEED_EVENTS = FEED_WINDOW.maxEvents.max;

/**
 * bench/public: the event page, a platform redirect and the feed of a 10k-event calendar (its
 * widest window, 5,000 events) answered
 * with a 304, each beside a bare Express 5 app answering the same from memory.
 */
export async function benchPublic(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('public');
  const team = await benchTeam(db);
  // Every request comes from one address: the read limits still count each one (their cost
  // is measured) but are set out of reach.
  const gateway = await startProcess(
    serviceArgv('gateway'),
    benchEnv(url, { PUBLIC_READ_RATE_PER_MINUTE: '1000000', PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '1000000' }),
    '/readyz',
  );
  // The same gateway with analytics off, for what counting costs the public paths.
  const uncounted = await startProcess(
    serviceArgv('gateway'),
    benchEnv(url, { PUBLIC_READ_RATE_PER_MINUTE: '1000000', PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '1000000', ANALYTICS_ENABLED: 'false' }),
    '/readyz',
  );
  const auth = { Authorization: `Bearer ${team.token}`, 'Content-Type': 'application/json' };
  let baseline: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const post = async (p: string, body: unknown) => (await (await fetch(gateway.url + p, { method: 'POST', headers: auth, body: JSON.stringify(body) })).json()) as { data: { uid: string; public_id: string; public_url: string } };
    const cal = await post('/api/calendars', { name: 'Public bench', timezone: 'Europe/Berlin' });
    const evt = await post(`/api/calendars/${cal.data.public_id}/events`, {
      title: 'Product launch',
      date_start: '2027-09-17 18:30',
      date_end: '2027-09-17 21:00',
      timezone: 'Europe/Berlin',
      location: 'Kulturbrauerei, Berlin',
      description: 'Doors open at 18:00.\n\nDrinks and a demo of everything new.',
    });
    const feedCal = await post('/api/calendars', { name: 'Big feed', timezone: 'America/New_York', feed_max_events: FEED_EVENTS });
    const feedCalRow = await db('calendars').where({ uid: feedCal.data.uid }).first('id');
    console.error(`bench/public: seeding ${SEEDED_EVENTS} events…`);
    await seedEvents(db, team.teamId, feedCalRow.id, SEEDED_EVENTS);

    const pageUrl = `/e/${evt.data.uid}`;
    const feedUrl = `/c/${feedCal.data.uid}.ics`;
    const page = await fetch(gateway.url + pageUrl).then((r) => r.text());
    const google = (await fetch(`${gateway.url}${pageUrl}/google`, { redirect: 'manual' })).headers.get('location') as string;
    const coldStart = process.hrtime.bigint();
    const feedRes = await fetch(gateway.url + feedUrl);
    const feedBody = await feedRes.text();
    const coldMs = Number(process.hrtime.bigint() - coldStart) / 1e6;
    const etag = feedRes.headers.get('etag') as string;
    // The gateway without analytics has its own address, which the feed's UIDs carry: its own
    // validator (gateways behind one PUBLIC_BASE_URL share theirs).
    const etags = new Map([[uncounted.url, (await fetch(uncounted.url + feedUrl)).headers.get('etag') as string]]);
    if ((feedBody.match(/BEGIN:VEVENT/g) ?? []).length !== FEED_EVENTS) throw new Error('bench/public: feed is missing events');

    const routesFile = path.join(os.tmpdir(), `bench-public-routes-${process.pid}.json`);
    fs.writeFileSync(
      routesFile,
      JSON.stringify([
        { method: 'GET', path: pageUrl, text: page, contentType: 'text/html' },
        { method: 'GET', path: `${pageUrl}/google`, location: google },
        { method: 'GET', path: feedUrl, text: feedBody, contentType: 'text/calendar', etag },
      ]),
    );
    baseline = await startProcess([path.join(DIST, 'bench/baselines/express-json.js'), routesFile], {}, '/healthz');

    const scenarios: Array<{ name: string; opts: (base: string) => LoadOptions; status: number; goal?: number }> = [
      { name: 'GET /e/{uid}', opts: (base) => ({ url: base + pageUrl }), status: 200 },
      { name: 'GET /e/{uid}/google (302)', opts: (base) => ({ url: `${base}${pageUrl}/google` }), status: 302, goal: 0.6 },
      { name: `GET /c/{uid}.ics, ${FEED_EVENTS} events, 304`, opts: (base) => ({ url: base + feedUrl, headers: { 'If-None-Match': etags.get(base) ?? etag } }), status: 304, goal: 0.6 },
    ];
    const rows: BenchRow[] = [];
    for (const s of scenarios) {
      await warm(s.opts(gateway.url));
      const ours = await load(s.opts(gateway.url));
      await warm(s.opts(baseline.url));
      const base = await load(s.opts(baseline.url));
      check(s.name, ours, s.status);
      check(`${s.name} (baseline)`, base, s.status);
      rows.push(row('public', `${s.name} req/s`, ours.rps, base.rps, 'req/s', s.goal ? { atLeast: s.goal } : { text: 'reported' }));
      rows.push(row('public', `${s.name} p99`, ours.p99, base.p99, 'ms', { text: 'reported' }));
    }
    // Analytics on (as `npm start` runs) beside off, on the three counted paths (a feed fetch,
    // its 304 included, counts too): three rounds,
    // the two gateways taking turns, medians.
    for (const s of scenarios) {
      const on: LoadResult[] = [];
      const off: LoadResult[] = [];
      await warm(s.opts(uncounted.url));
      // Which goes first changes every round, so neither always runs on a machine the other just warmed.
      for (let round = 0; round < 3; round++) {
        if (round % 2 === 0) {
          on.push(await load(s.opts(gateway.url)));
          off.push(await load(s.opts(uncounted.url)));
        } else {
          off.push(await load(s.opts(uncounted.url)));
          on.push(await load(s.opts(gateway.url)));
        }
      }
      [...on, ...off].forEach((r) => check(`${s.name} (analytics)`, r, s.status));
      const median = (rs: LoadResult[], pick: (r: LoadResult) => number) => rs.map(pick).sort((x, y) => x - y)[1];
      rows.push(row('public', `${s.name} analytics on vs off, req/s`, median(on, (r) => r.rps), median(off, (r) => r.rps), 'req/s', { atLeast: 0.95 }));
      rows.push(row('public', `${s.name} analytics on vs off, p99`, median(on, (r) => r.p99), median(off, (r) => r.p99), 'ms', { text: 'reported' }));
    }
    const feedBytes = Buffer.byteLength(feedBody);
    rows.push(row('public', `feed build, ${FEED_EVENTS} events (${Math.round(feedBytes / 1024)} KiB), first request`, coldMs, coldMs, 'ms', { text: 'reported' }));
    fs.rmSync(routesFile, { force: true });
    return rows;
  } finally {
    await gateway.stop();
    await uncounted.stop();
    await baseline?.stop();
    await db.destroy();
  }
}

function check(name: string, r: LoadResult, status: number): void {
  const right = r.statusCounts[status] ?? 0;
  if (r.errors > 0 || right !== r.requests) throw new Error(`bench/public ${name}: ${r.errors} errors, statuses ${JSON.stringify(r.statusCounts)} (want ${status})`);
}
