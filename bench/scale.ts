import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EVENTS } from '../services/gateway/events/events.service';
import { createDb } from '../shared/db/knex';
import { load, warm, BENCH_CONNECTIONS, type LoadOptions, type LoadResult } from './lib/load';
import { serviceArgv, startProcess } from './lib/processes';
import { row, toMarkdown, type BenchRow } from './lib/report';
import { SCALE_SEARCH_TERM, seedScaleEvents } from './lib/scale-seed';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

/** Calendar sizes, smallest first: the first is every figure's baseline. */
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
/** Rounds over the sizes; each figure is the median of its rounds. */
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const PER_PAGE = 50;
const DAY_MS = 24 * 3600 * 1000;

interface Calendar {
  size: number;
  uid: string;
  publicId: string;
  id: number;
  token: string;
}

interface ListPath {
  name: string;
  /** The path to load in this calendar (a cursor depends on its rows) and its headers. */
  request(cal: Calendar): Promise<{ path: string; headers: Record<string, string> }>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/**
 * bench/scale: a calendar of 10k, one of 100k and one of 1M events, each its team's only
 * one (seeded by one INSERT … SELECT over generate_series, half of the events past), and
 * every list path loaded through one gateway process in each: the events API's first page,
 * a cursor page halfway through, the first and last pages of a one-month
 * start_date/end_date window, the calendar page, a search for a word in 0.65% of titles
 * and the first page of range=upcoming, and the calendar's feed, built and cold (its
 * time, bytes, the gateway's RSS and /healthz meanwhile). How long each seeding took, and
 * the gateway's peak RSS and slowest /healthz over the whole run, are figures too. The sizes take turns, round after round, so a
 * machine busier at one moment weighs on all of them; each figure is the median of its
 * rounds, beside the same path's at the smallest size: a ratio of 1 means the path costs
 * the same however large the calendar.
 */
export async function benchScale(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('scale');
  // The seeding and its VACUUM ANALYZE of a million rows outlast the usual 15 s limit. One
  // INSERT per core at once: keeping the indexes up is what takes the time, one core each.
  const seedParts = os.cpus().length;
  const seeder = createDb(url, { poolMax: seedParts, statementTimeoutMs: 0 });
  const gateway = await startProcess(
    serviceArgv('gateway'),
    // Every request comes from one address, to one calendar: the read limits are not what is measured.
    benchEnv(url, { PUBLIC_READ_RATE_PER_MINUTE: '1000000', PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '1000000' }),
    '/readyz',
  );
  try {
    const now = new Date();
    const calendars: Calendar[] = [];
    const seedSeconds: number[] = [];
    for (const size of SIZES) {
      const team = await benchTeam(db);
      const res = await fetch(`${gateway.url}/api/calendars`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${team.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `Scale ${size}`, timezone: 'Europe/Berlin' }),
      });
      const { data } = (await res.json()) as { data: { uid: string; public_id: string } };
      const { id } = await db('calendars').where({ uid: data.uid }).first('id');
      console.error(`bench/scale: seeding ${size} events…`);
      const seedStarted = performance.now();
      await seedScaleEvents(seeder, { teamId: team.teamId, calendarId: id, count: size, now, parts: seedParts });
      seedSeconds.push(Math.round((performance.now() - seedStarted) / 100) / 10);
      calendars.push({ size, uid: data.uid, publicId: data.public_id, id, token: team.token });
    }

    // A one-month window starting six months ago: most of each calendar lies after it.
    const from = new Date(now.getTime() - 182 * DAY_MS).toISOString();
    const to = new Date(now.getTime() - 152 * DAY_MS).toISOString();
    const auth = (cal: Calendar) => ({ Authorization: `Bearer ${cal.token}` });
    const paths: ListPath[] = [
      { name: 'GET …/events, first page', request: async (cal) => ({ path: `/api/calendars/${cal.publicId}/events?per_page=${PER_PAGE}`, headers: auth(cal) }) },
      {
        name: 'GET …/events?cursor, a page halfway through',
        request: async (cal) => ({ path: `/api/calendars/${cal.publicId}/events?per_page=${PER_PAGE}&cursor=${await middlePageCursor(cal)}`, headers: auth(cal) }),
      },
      {
        name: 'GET …/events?start_date&end_date (one month), first page',
        request: async (cal) => ({ path: `/api/calendars/${cal.publicId}/events?start_date=${from}&end_date=${to}&per_page=${PER_PAGE}`, headers: auth(cal) }),
      },
      { name: 'GET /c/{uid} (100 upcoming events)', request: async (cal) => ({ path: `/c/${cal.uid}`, headers: { Accept: 'text/html' } }) },
      {
        name: 'GET …/events?start_date&end_date (one month), last page',
        request: async (cal) => ({
          path: `/api/calendars/${cal.publicId}/events?start_date=${from}&end_date=${to}&per_page=${PER_PAGE}&cursor=${await lastPageCursor(cal)}`,
          headers: auth(cal),
        }),
      },
      {
        name: `GET /api/events?search=${SCALE_SEARCH_TERM} (0.65% of titles)`,
        request: async (cal) => ({ path: `/api/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}`, headers: auth(cal) }),
      },
      { name: 'GET /api/events?range=upcoming', request: async (cal) => ({ path: `/api/events?range=upcoming&per_page=${PER_PAGE}`, headers: auth(cal) }) },
      { name: 'GET /c/{uid}.ics (built, gzip)', request: async (cal) => ({ path: `/c/${cal.uid}.ics`, headers: { 'Accept-Encoding': 'gzip' } }) },
    ];

    /** The cursor of a page halfway through the calendar: after its middle event in listing order. */
    async function middlePageCursor(cal: Calendar): Promise<string> {
      const middle = await db('events')
        .where({ calendar_id: cal.id })
        .whereNull('deleted_at')
        .orderBy([{ column: 'date_start' }, { column: 'id' }])
        .offset(Math.floor(cal.size / 2))
        .first('date_start', 'id');
      return EVENTS.cursorAfter(benchEnv(url).APP_KEY as string, [middle.date_start, middle.id]);
    }

    /** The cursor of the window's last page: after the event that leaves fewer than a page. */
    async function lastPageCursor(cal: Calendar): Promise<string> {
      const inWindow = db('events').where({ calendar_id: cal.id }).whereNull('deleted_at').where('date_start', '>=', from).where('ends_at', '<=', to);
      const [{ count }] = await inWindow.clone().count<{ count: number }[]>('* as count');
      const last = await inWindow
        .clone()
        .orderBy([{ column: 'date_start', order: 'desc' }, { column: 'id', order: 'desc' }])
        .offset(Math.min(Number(count) - 1, PER_PAGE / 2))
        .first('date_start', 'id');
      return EVENTS.cursorAfter(benchEnv(url).APP_KEY as string, [last.date_start, last.id]);
    }

    const rows: BenchRow[] = calendars.map((cal, i) =>
      row('scale', `seeding ${cal.size} events (INSERT … SELECT, one per core, then VACUUM ANALYZE)`, seedSeconds[i], 60, 's', { atMost: 1, text: 'under a minute' }),
    );
    // The gateway's memory and /healthz from here to the end: cold feeds and every load at every size.
    const throughout = watchGateway(gateway);
    // Cold feeds first, the gateway fresh: each size's feed built afresh every round (a
    // change to the calendar drops it), its time, size and the gateway's RSS meanwhile, and
    // /healthz asked every 50 ms throughout.
    const cold = calendars.map(() => [] as ColdFeed[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, cal] of calendars.entries()) cold[i].push(await coldFeed(gateway, cal));
    }
    const coldTime = cold.map((c) => median(c.map((x) => x.ms)));
    for (const [i, cal] of calendars.entries()) {
      const c = cold[i][cold[i].length - 1];
      const rss = Math.max(...cold[i].map((x) => x.peakRssMb));
      const health = Math.max(...cold[i].map((x) => x.slowestHealthMs));
      console.error(`bench/scale: cold feed at ${cal.size}: ${coldTime[i]} ms, ${c.events} events, ${(c.bytes / 1e6).toFixed(2)} MB (${(c.gzipBytes / 1e6).toFixed(2)} MB gzip), gateway peak ${rss} MB, slowest /healthz ${health} ms`);
      rows.push(row('scale', `GET /c/{uid}.ics cold at ${cal.size} events: gateway peak RSS`, rss, 300, 'MB', { atMost: 1, text: '≤ 300 MB' }));
      rows.push(row('scale', `GET /c/{uid}.ics cold at ${cal.size} events: slowest /healthz meanwhile`, health, 1000, 'ms', { atMost: 1, text: '≤ 1000 ms' }));
      if (i === 0) continue;
      rows.push(row('scale', `GET /c/{uid}.ics cold (${c.events} events, ${(c.bytes / 1e6).toFixed(2)} MB), ${cal.size} vs ${calendars[0].size} events`, coldTime[i], coldTime[0], 'ms', { atMost: 2 }));
    }
    for (const p of paths) {
      const requests = await Promise.all(calendars.map(async (cal) => ({ cal, ...(await p.request(cal)) })));
      const options = requests.map((r): LoadOptions => ({ url: gateway.url + r.path, headers: r.headers, durationSec: DURATION }));
      for (const opts of options) await warm(opts);
      const results: LoadResult[][] = calendars.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, opts] of options.entries()) {
          const result = await load(opts);
          check(`${p.name} at ${calendars[i].size}`, result);
          console.error(`bench/scale: ${p.name}, ${calendars[i].size} events, round ${round + 1}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms`);
          results[i].push(result);
        }
      }
      const rps = results.map((r) => median(r.map((x) => x.rps)));
      const p99 = results.map((r) => median(r.map((x) => x.p99)));
      for (let i = 1; i < calendars.length; i++) {
        const sizes = `${calendars[i].size} vs ${calendars[0].size} events`;
        rows.push(row('scale', `${p.name}, ${sizes}, req/s`, rps[i], rps[0], 'req/s', { atLeast: 0.7 }));
        rows.push(row('scale', `${p.name}, ${sizes}, p99`, p99[i], p99[0], 'ms', { atMost: 1.5 }));
      }
    }
    const watched = await throughout.stop();
    console.error(`bench/scale: throughout, gateway peak ${watched.peakRssMb} MB, slowest /healthz ${watched.slowestHealthMs} ms (${watched.probes} probes)`);
    rows.push(row('scale', `gateway peak RSS throughout (cold feeds, then every path loaded at every size)`, watched.peakRssMb, 300, 'MB', { atMost: 1, text: '≤ 300 MB' }));
    rows.push(row('scale', `slowest /healthz throughout, under 50 connections of load (${watched.probes} probes)`, watched.slowestHealthMs, 1000, 'ms', { atMost: 1, text: '≤ 1000 ms' }));
    return rows;
  } finally {
    await gateway.stop();
    await seeder.destroy();
    await db.destroy();
  }
}

interface ColdFeed {
  ms: number;
  events: number;
  bytes: number;
  gzipBytes: number;
  peakRssMb: number;
  slowestHealthMs: number;
}

/** The gateway's resident memory now, in MB (Linux). */
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

/** Peak RSS and the slowest of /healthz asked every 200 ms, from now until stop(). */
function watchGateway(gateway: { url: string; child: { pid?: number } }): { stop(): Promise<{ peakRssMb: number; slowestHealthMs: number; probes: number }> } {
  const pid = gateway.child.pid as number;
  const seen = { peakRssMb: rssMb(pid), slowestHealthMs: 0, probes: 0 };
  let done = false;
  const probes = (async () => {
    while (!done) {
      const started = performance.now();
      await fetch(`${gateway.url}/healthz`).then((r) => r.arrayBuffer());
      seen.slowestHealthMs = Math.max(seen.slowestHealthMs, Math.round(performance.now() - started));
      seen.peakRssMb = Math.max(seen.peakRssMb, rssMb(pid));
      seen.probes++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      done = true;
      await probes;
      return seen;
    },
  };
}

/** A calendar's feed built afresh: renamed (which drops its built feed), then fetched as a calendar app does. */
async function coldFeed(gateway: { url: string; child: { pid?: number } }, cal: Calendar): Promise<ColdFeed> {
  const rename = await fetch(`${gateway.url}/api/calendars/${cal.publicId}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${cal.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `Scale ${cal.size} ${Date.now()}`, timezone: 'Europe/Berlin' }),
  });
  if (rename.status !== 200) throw new Error(`bench/scale: renaming the calendar answered ${rename.status}`);
  const pid = gateway.child.pid as number;
  let peakRssMb = rssMb(pid);
  let slowestHealthMs = 0;
  let done = false;
  const probes = (async () => {
    while (!done) {
      const started = performance.now();
      await fetch(`${gateway.url}/healthz`).then((r) => r.arrayBuffer());
      slowestHealthMs = Math.max(slowestHealthMs, Math.round(performance.now() - started));
      peakRssMb = Math.max(peakRssMb, rssMb(pid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const started = performance.now();
  const res = await fetch(`${gateway.url}/c/${cal.uid}.ics`, { headers: { 'Accept-Encoding': 'gzip' } });
  const text = await res.text();
  const ms = Math.round(performance.now() - started);
  done = true;
  await probes;
  if (res.status !== 200) throw new Error(`bench/scale: the cold feed answered ${res.status}`);
  const gz = await fetch(`${gateway.url}/c/${cal.uid}.ics`, { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } });
  return {
    ms,
    events: text.split('BEGIN:VEVENT').length - 1,
    bytes: Buffer.byteLength(text),
    gzipBytes: Number(gz.headers.get('content-length')),
    peakRssMb,
    slowestHealthMs,
  };
}

function check(name: string, r: LoadResult): void {
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`bench/scale ${name}: ${r.errors} errors, ${r.non2xx} non-2xx (${JSON.stringify(r.statusCounts)})`);
}

/**
 * Puts this run's section in bench/RESULTS.md in place of the one before it, keeping every
 * other section (`npm run bench` rewrites the table above it; the mutation scores follow it),
 * or at the end when there was none.
 */
function appendResults(section: string): string {
  const file = path.resolve(__dirname, '..', '..', 'bench', 'RESULTS.md');
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const start = current.indexOf(SECTION_HEADING);
  if (start === -1) {
    fs.writeFileSync(file, `${current.trimEnd()}\n\n${section}`);
    return file;
  }
  const next = current.indexOf('\n## ', start + SECTION_HEADING.length);
  const after = next === -1 ? '' : `\n${current.slice(next + 1)}`;
  fs.writeFileSync(file, `${current.slice(0, start).trimEnd()}\n\n${section.trimEnd()}\n${after}`);
  return file;
}

const SECTION_HEADING = '## Calendar size (bench/scale)';

async function main(): Promise<void> {
  const rows = await benchScale();
  const meta = `Run ${new Date().toISOString()} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ${BENCH_CONNECTIONS} connections, ${DURATION} s a load, medians of ${ROUNDS} rounds. Calendars of ${SIZES.join(', ')} events; each list's figure beside its own at ${SIZES[0]} events from the same run (ratio = ours ÷ baseline; for p99 lower is better). \`npm run bench:scale\`.`;
  const table = toMarkdown(rows, meta).replace('# Benchmark results', SECTION_HEADING);
  process.stdout.write(table);
  console.error(`written to ${appendResults(table)}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
