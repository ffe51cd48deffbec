import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../shared/db/knex';
import { load, warm, BENCH_CONNECTIONS, BENCH_DURATION, type LoadOptions, type LoadResult } from './lib/load';
import { serviceArgv, startProcess } from './lib/processes';
import { row, toMarkdown, type BenchRow } from './lib/report';
import { SCALE_SEARCH_TERM, seedScaleEvents } from './lib/scale-seed';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

/** Calendar sizes, smallest first: the first is every figure's baseline. */
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const PER_PAGE = 50;
const DAY_MS = 24 * 3600 * 1000;

interface ListPath {
  name: string;
  /** The path to load, for the calendar as it is now (a cursor depends on the rows). */
  path(): Promise<string>;
  headers?: Record<string, string>;
}

/**
 * bench/scale: one calendar grown to 10k, 100k and 1M events (one INSERT … SELECT over
 * generate_series each time, half of the events past), and at each size every list path
 * loaded through a gateway process: the calendar page, the last page of a one-month
 * start_date/end_date window, a search for a word in 0.65% of titles, and the first page of
 * range=upcoming. Each figure beside the same path's figure at the first size, so a ratio of
 * 1 means the path costs the same however large the calendar.
 */
export async function benchScale(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('scale');
  // The seeding and its VACUUM ANALYZE of a million rows outlast the usual 15 s limit.
  const seeder = createDb(url, { poolMax: 1, statementTimeoutMs: 0 });
  const team = await benchTeam(db);
  const gateway = await startProcess(
    serviceArgv('gateway'),
    // Every request comes from one address, to one calendar: the read limits are not what is measured.
    benchEnv(url, { PUBLIC_READ_RATE_PER_MINUTE: '1000000', PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '1000000' }),
    '/readyz',
  );
  const auth = { Authorization: `Bearer ${team.token}` };
  try {
    const now = new Date();
    const cal = (await (
      await fetch(`${gateway.url}/api/calendars`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Scale', timezone: 'Europe/Berlin' }) })
    ).json()) as { data: { uid: string; public_id: string } };
    const calRow = await db('calendars').where({ uid: cal.data.uid }).first('id');

    // A one-month window starting six months ago: most of the calendar lies after it.
    const from = new Date(now.getTime() - 182 * DAY_MS).toISOString();
    const to = new Date(now.getTime() - 152 * DAY_MS).toISOString();
    const windowPath = `/api/calendars/${cal.data.public_id}/events?start_date=${from}&end_date=${to}&per_page=${PER_PAGE}`;
    const paths: ListPath[] = [
      { name: 'GET /c/{uid} (100 upcoming events)', path: async () => `/c/${cal.data.uid}`, headers: { Accept: 'text/html' } },
      { name: 'GET …/events?start_date&end_date (one month), last page', path: async () => `${windowPath}&cursor=${await lastPageCursor()}`, headers: auth },
      { name: `GET /api/events?search=${SCALE_SEARCH_TERM} (0.65% of titles)`, path: async () => `/api/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}`, headers: auth },
      { name: 'GET /api/events?range=upcoming', path: async () => `/api/events?range=upcoming&per_page=${PER_PAGE}`, headers: auth },
    ];

    /** The cursor of the window's last page: after the event that leaves fewer than a page. */
    async function lastPageCursor(): Promise<string> {
      const inWindow = db('events')
        .where({ calendar_id: calRow.id })
        .whereNull('deleted_at')
        .where('date_start', '>=', from)
        .where('ends_at', '<=', to);
      const [{ count }] = await inWindow.clone().count<{ count: number }[]>('* as count');
      const row = await inWindow
        .clone()
        .orderBy([{ column: 'date_start', order: 'desc' }, { column: 'id', order: 'desc' }])
        .offset(Math.min(Number(count), PER_PAGE / 2))
        .first('date_start', 'id');
      return Buffer.from(JSON.stringify([row.date_start, row.id])).toString('base64url');
    }

    const figures = new Map<string, Array<{ size: number; result: LoadResult }>>();
    let seeded = 0;
    for (const size of SIZES) {
      console.error(`bench/scale: growing the calendar to ${size} events…`);
      await seedScaleEvents(seeder, { teamId: team.teamId, calendarId: calRow.id, count: size - seeded, now });
      seeded = size;
      for (const p of paths) {
        const opts: LoadOptions = { url: gateway.url + (await p.path()), headers: p.headers };
        await warm(opts);
        const result = await load(opts);
        check(`${p.name} at ${size}`, result);
        console.error(`bench/scale: ${size} events, ${p.name}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms`);
        figures.set(p.name, [...(figures.get(p.name) ?? []), { size, result }]);
      }
    }

    const rows: BenchRow[] = [];
    for (const p of paths) {
      const [base, ...grown] = figures.get(p.name) ?? [];
      for (const { size, result } of grown) {
        rows.push(row('scale', `${p.name}, ${size} events, req/s (baseline: ${base.size})`, result.rps, base.result.rps, 'req/s', { atLeast: 0.7 }));
        rows.push(row('scale', `${p.name}, ${size} events, p99 (baseline: ${base.size})`, result.p99, base.result.p99, 'ms', { atMost: 1.5 }));
      }
    }
    return rows;
  } finally {
    await gateway.stop();
    await seeder.destroy();
    await db.destroy();
  }
}

function check(name: string, r: LoadResult): void {
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`bench/scale ${name}: ${r.errors} errors, ${r.non2xx} non-2xx (${JSON.stringify(r.statusCounts)})`);
}

/**
 * Puts this run's section at the end of bench/RESULTS.md, in place of the one before it:
 * `npm run bench` rewrites the table above and keeps it.
 */
function appendResults(section: string): string {
  const file = path.resolve(__dirname, '..', '..', 'bench', 'RESULTS.md');
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const start = current.indexOf(SECTION_HEADING);
  const kept = (start === -1 ? current : current.slice(0, start)).trimEnd();
  fs.writeFileSync(file, `${kept}\n\n${section}`);
  return file;
}

const SECTION_HEADING = '## Calendar size (bench/scale)';

async function main(): Promise<void> {
  const rows = await benchScale();
  const meta = `Run ${new Date().toISOString()} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ${BENCH_CONNECTIONS} connections for ${BENCH_DURATION} s a figure. One calendar grown to ${SIZES.join(', ')} events; each list's figure beside its own at ${SIZES[0]} events from the same run (ratio = ours ÷ baseline; for p99 lower is better).`;
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
