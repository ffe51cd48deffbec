import path from 'node:path';
import autocannon from 'autocannon';
import { DIST, serviceArgv, startProcess, startWorker } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

const CONNECTIONS = Number(process.env.BENCH_INGEST_CONNECTIONS ?? 100);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);

/** A typical form: 8 fields, the title made unique per request so each is its own event. */
function formBody(n: number): string {
  return new URLSearchParams({
    title: `Demo request ${n}`,
    start: '2027-05-12 15:00',
    duration: '30',
    timezone: 'Europe/Berlin',
    location: 'Video call',
    description: 'Requested through the website contact form.',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
  }).toString();
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  statusCounts: Record<string, number>;
  ids: string[];
}

async function flood(url: string, collectIds: boolean): Promise<Measured> {
  let n = 0;
  const ids: string[] = [];
  const statusCounts: Record<string, number> = {};
  const instance = autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: formBody(n++) }) } as never],
    setupClient: collectIds
      ? (client: { on(event: 'body', fn: (body: Buffer) => void): void }) =>
          client.on('body', (body: Buffer) => {
            const id = /"id":"(sls_[0-9A-Za-z]+)"/.exec(body.toString())?.[1];
            if (id) ids.push(id);
          })
      : undefined,
  } as autocannon.Options);
  (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, status: number) => {
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  });
  const r = await instance;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, statusCounts, ids };
}

/**
 * bench/ingest: 100 connections posting an 8-field form to /s/{key}, beside a bare Express
 * app (202 after express.urlencoded) and a raw node:http server (202 after the body). Then
 * the worker drains, and every 202 is checked to be exactly one event.
 */
export async function benchIngest(): Promise<{ rows: BenchRow[]; ingestRate: number; groupSize: number }> {
  const { url, db } = await freshDatabase('ingest');
  const team = await benchTeam(db);
  const env = benchEnv(url, { QUEUE_PREFIX: '{bench-ingest}' });
  const gateway = await startProcess(serviceArgv('gateway'), env, '/readyz');
  try {
    const auth = { Authorization: `Bearer ${team.token}`, 'Content-Type': 'application/json' };
    const cal = (await (await fetch(`${gateway.url}/api/calendars`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Leads', timezone: 'Europe/Berlin' }) })).json()) as { data: { public_id: string } };
    const link = (await (await fetch(`${gateway.url}/api/smart-links`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Contact form', calendar: cal.data.public_id }) })).json()) as { data: { key: string } };
    const path_ = `/s/${link.data.key}`;

    // warm up, then drop what the warm-up queued so the count below is only the measured run's
    await flood(gateway.url + path_, false);
    const { Queue } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: null });
    const queue = new Queue('smart-link-submissions', { connection: redis, prefix: '{bench-ingest}' });
    await queue.obliterate({ force: true });

    const ours = await flood(gateway.url + path_, true);
    const accepted = ours.statusCounts[202] ?? 0;
    const other = Object.entries(ours.statusCounts).filter(([s]) => s !== '202');
    if (other.length) throw new Error(`bench/ingest: unexpected answers ${JSON.stringify(ours.statusCounts)}`);

    const express = await startProcess([path.join(DIST, 'bench/baselines/express-urlencoded.js')], {});
    await flood(`${express.url}${path_}`, false);
    const bare = await flood(`${express.url}${path_}`, false);
    await express.stop();
    const raw = await startProcess([path.join(DIST, 'bench/baselines/raw-http.js')], {});
    await flood(`${raw.url}${path_}`, false);
    const node = await flood(`${raw.url}${path_}`, false);
    await raw.stop();

    // drain with the worker, then count
    const drainStart = Date.now();
    const worker = startWorker(serviceArgv('smart-link-worker'), env);
    const queued = await queue.count(); // jobs: a flooded gateway groups submissions
    for (;;) {
      const [{ count }] = await db('smart_link_submissions').count<{ count: number }[]>('* as count');
      if (count >= accepted) break;
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 200);
      });
    }
    const drainSeconds = (Date.now() - drainStart) / 1000;
    await worker.stop();
    await queue.obliterate({ force: true }); // the run's finished jobs: nothing left in Redis
    await queue.close();
    redis.disconnect();

    const recorded = new Set((await db('smart_link_submissions').select('uid')).map((r) => `sls_${r.uid}`));
    const lost = ours.ids.filter((id) => !recorded.has(id)).length;
    const [{ events }] = await db('events').where({ team_id: team.teamId }).count<{ events: number }[]>('* as events');
    const [{ processed }] = await db('smart_link_submissions').where({ status: 'processed' }).count<{ processed: number }[]>('* as processed');
    const duplicated = events - processed;
    console.error(
      `bench/ingest: ${accepted} answered 202 (${ours.ids.length} ids read), in ${queued} jobs (${(accepted / queued).toFixed(1)} a job), ${recorded.size} recorded, ${events} events; lost ${lost}, duplicated ${duplicated}; drained in ${drainSeconds.toFixed(1)} s`,
    );
    if (lost > 0 || duplicated !== 0 || processed !== recorded.size) throw new Error(`bench/ingest: lost ${lost}, duplicated ${duplicated}`);

    return {
      ingestRate: ours.rps,
      groupSize: accepted / queued,
      rows: [
        row('ingest', 'POST /s/{key} req/s vs bare Express', ours.rps, bare.rps, 'req/s', { atLeast: 1.5 }),
        row('ingest', 'POST /s/{key} req/s vs raw node:http', ours.rps, node.rps, 'req/s', { atLeast: 0.25 }),
        row('ingest', 'POST /s/{key} p50 vs bare Express', ours.p50, bare.p50, 'ms', { text: 'reported' }),
        row('ingest', 'POST /s/{key} p99 vs bare Express', ours.p99, bare.p99, 'ms', { atMost: 1 }),
        row('ingest', `lost + duplicated of ${accepted} accepted`, lost + duplicated, 0, 'subs', { text: '0', met: lost + duplicated === 0 }),
      ],
    };
  } finally {
    await gateway.stop();
    await db.destroy();
  }
}
