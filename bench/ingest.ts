import path from 'node:path';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Knex } from '../shared/db/knex';
import { DIST, type Proc, serviceArgv, startProcess, startWorker } from './lib/processes';
import { backendPids, cpuMeter, othersMeter } from './lib/cpu';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

const CONNECTIONS = Number(process.env.BENCH_INGEST_CONNECTIONS ?? 100);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
/**
 * `BENCH_INGEST_MODE`: `gateway` (the gateway alone, the worker draining after the load),
 * `machine` (gateway and smart-link worker on one machine, the worker draining while the
 * load arrives, beside Express writing each submission to Postgres itself), or both (the
 * default).
 */
const MODE = process.env.BENCH_INGEST_MODE ?? 'both';
/** After the load, the drain is given up on when no event has been made for this long. */
const STALL_MS = 30_000;
/** The application_name of the Express + INSERT baseline's connections. */
const BASELINE_APPLICATION = 'express-insert';

/**
 * Forms sent, counted across every load of the process: a warm-up's last requests, still
 * in the gateway when its queue is emptied, must not make the same events as the measured
 * run's first ones (those would then be duplicates, not events).
 */
let formsSent = 0;

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
  /** Seconds the load ran. */
  seconds: number;
  /** The share of the machine (0 to 1) that processes other than the measured ones used meanwhile; null if unknown. */
  others: number | null;
  statusCounts: Record<string, number>;
  ids: string[];
}

/**
 * 100 connections posting forms for DURATION seconds, reading the submission id from every
 * answer (the baselines answer one too): the load generator shares the two cores with what
 * it measures, so it does the same work per answer in every run. `ours`: the pids of what is measured
 * (server processes, their Postgres backends…); with this process they are told apart from
 * the rest of the machine's load.
 */
async function flood(url: string, ours: () => Promise<number[]> = async () => []): Promise<Measured> {
  const others = othersMeter(async () => [process.pid, ...(await ours())]);
  await others.start();
  const ids: string[] = [];
  const statusCounts: Record<string, number> = {};
  const instance = autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: formBody(formsSent++) }) } as never],
    setupClient: (client: { on(event: 'body', fn: (body: Buffer) => void): void }) =>
      client.on('body', (body: Buffer) => {
        const id = /"id":"((?:sls|sub)_[0-9A-Za-z]+)"/.exec(body.toString())?.[1];
        if (id) ids.push(id);
      }),
  } as autocannon.Options);
  (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, status: number) => {
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  });
  const r = await instance;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, seconds: r.duration, others: await others.stop(), statusCounts, ids };
}

/** The number of 202s of a run; any other answer fails the benchmark. */
function acceptedOf(name: string, m: Measured): number {
  const other = Object.entries(m.statusCounts).filter(([s]) => s !== '202');
  if (other.length) throw new Error(`bench/ingest: ${name}: unexpected answers ${JSON.stringify(m.statusCounts)}`);
  return m.statusCounts[202] ?? 0;
}

/** CLOCK_MONOTONIC in µs, the clock of a V8 CPU profile's sample times. */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/** The Redis server's pid (it runs on this machine in the benchmarks). */
async function redisPid(redis: Redis): Promise<number[]> {
  const m = /process_id:(\d+)/.exec(await redis.info('server'));
  return m ? [Number(m[1])] : [];
}

const othersNote = (m: Measured) => (m.others === null ? '' : ` (other processes used ${(100 * m.others).toFixed(0)}% of the machine meanwhile)`);

const countOf = async (query: Knex.QueryBuilder): Promise<number> => Number((await query.count<{ count: string }[]>('* as count'))[0].count);

/**
 * Waits until the team has `target` events, polling every `everyMs`; gives up when none
 * has been made for STALL_MS. With `ids`, waits until each of them is a processed
 * submission as well (the team's count also holds submissions whose answers were cut off
 * when the load stopped). Answers the count and performance.now() when it was read.
 */
async function eventsReach(db: Knex, teamId: number, target: number, everyMs: number, ids?: string[]): Promise<{ events: number; at: number }> {
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    const at = performance.now();
    const events = await countOf(db('events').where({ team_id: teamId }));
    if (events >= target) {
      if (!ids) return { events, at };
      // the records are read after this instant: all processed then means all were by now
      const checkedAt = performance.now();
      if ((await exactlyOnce(db, teamId, ids)).lost === 0) return { events, at: checkedAt };
    }
    if (events !== last) {
      last = events;
      lastChange = at;
    } else if (at - lastChange > STALL_MS) return { events, at };
    await sleep(everyMs);
  }
}

/** Waits until the team's count of events has not moved for `quietMs`. */
async function eventsSettle(db: Knex, teamId: number, quietMs: number): Promise<void> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const events = await countOf(db('events').where({ team_id: teamId }));
    if (events !== last) {
      last = events;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) return;
    await sleep(100);
  }
}

/**
 * Every 202 must be exactly one event: `lost` counts the answered ids without a processed
 * submission record, `duplicated` the team's events beyond its processed submissions.
 */
async function exactlyOnce(db: Knex, teamId: number, ids: string[]) {
  const records = await db('smart_link_submissions').where({ team_id: teamId }).select('uid', 'status');
  const processed = new Set(records.filter((r) => r.status === 'processed').map((r) => `sls_${r.uid}`));
  const lost = ids.filter((id) => !processed.has(id)).length;
  const events = await countOf(db('events').where({ team_id: teamId }));
  return { recorded: records.length, processed: processed.size, events, lost, duplicated: events - processed.size };
}

/** A calendar and a smart link to it, made through the gateway's API; answers the link's path. */
async function smartLinkPath(gatewayUrl: string, token: string): Promise<string> {
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const cal = (await (await fetch(`${gatewayUrl}/api/calendars`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Leads', timezone: 'Europe/Berlin' }) })).json()) as { data: { public_id: string } };
  const link = (await (await fetch(`${gatewayUrl}/api/smart-links`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Contact form', calendar: cal.data.public_id }) })).json()) as { data: { key: string } };
  return `/s/${link.data.key}`;
}

/** A baseline process from bench/baselines: warmed up by one run, then measured by a second. */
async function baseline(file: string): Promise<Measured> {
  const proc = await startProcess([path.join(DIST, 'bench/baselines', file)], {});
  try {
    await flood(`${proc.url}/s/baseline`);
    const measured = await flood(`${proc.url}/s/baseline`, async () => [proc.child.pid as number]);
    console.error(`bench/ingest, ${file}: ${measured.rps.toFixed(0)} req/s${othersNote(measured)}`);
    return measured;
  } finally {
    await proc.stop();
  }
}

const bareExpress = () => baseline('express-urlencoded.js');

/**
 * The gateway alone: 100 connections posting an 8-field form to /s/{key}, beside a bare
 * Express app (202 after express.urlencoded) and a raw node:http server (202 after the
 * body). Then the worker drains, and every 202 is checked to be exactly one event.
 */
async function gatewayAlone(bare: Measured): Promise<{ rows: BenchRow[]; ingestRate: number; groupSize: number }> {
  const { url, db } = await freshDatabase('ingest');
  const team = await benchTeam(db);
  const env = benchEnv(url, { QUEUE_PREFIX: '{bench-ingest}' });
  const gateway = await startProcess(serviceArgv('gateway'), env, '/readyz');
  try {
    const path_ = await smartLinkPath(gateway.url, team.token);

    // warm up, then drop what the warm-up queued so the count below is only the measured run's
    await flood(gateway.url + path_);
    const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: null });
    const queue = new Queue('smart-link-submissions', { connection: redis, prefix: '{bench-ingest}' });
    await queue.obliterate({ force: true });
    const redisPids = await redisPid(redis);

    const gatewayCpu = cpuMeter(async () => [gateway.child.pid as number]);
    await gatewayCpu.start();
    const ours = await flood(gateway.url + path_, async () => [gateway.child.pid as number, ...redisPids]);
    const cpuSeconds = await gatewayCpu.stop();
    const accepted = acceptedOf('gateway alone', ours);
    await gateway.stop();

    const node = await baseline('raw-http.js');

    // drain with the worker, then count
    const drainStart = Date.now();
    const worker = startWorker(serviceArgv('smart-link-worker'), env);
    const queued = await queue.count(); // jobs: a flooded gateway groups submissions
    while ((await countOf(db('smart_link_submissions'))) < accepted) await sleep(200);
    const drainSeconds = (Date.now() - drainStart) / 1000;
    await worker.stop();
    await queue.obliterate({ force: true }); // the run's finished jobs: nothing left in Redis
    await queue.close();
    redis.disconnect();

    const { recorded, processed, events, lost, duplicated } = await exactlyOnce(db, team.teamId, ours.ids);
    console.error(
      `bench/ingest, gateway alone: ${accepted} answered 202 (${ours.ids.length} ids read), in ${queued} jobs (${(accepted / queued).toFixed(1)} a job), ${recorded} recorded, ${events} events; lost ${lost}, duplicated ${duplicated}; drained in ${drainSeconds.toFixed(1)} s; gateway CPU ${cpuSeconds === null ? '?' : ((1e6 * cpuSeconds) / accepted).toFixed(0)} ms per 1000 accepted${othersNote(ours)}`,
    );
    if (lost > 0 || duplicated !== 0 || processed !== recorded) throw new Error(`bench/ingest: lost ${lost}, duplicated ${duplicated}`);

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

/**
 * One machine, as `npm start` runs it: the gateway and the smart-link worker as their own
 * processes (with their shipped node flags), the worker draining while submissions arrive.
 * Beside it, Express parsing the same form and INSERTing each submission into Postgres
 * before its 202 (bench/baselines/express-insert.ts), in the same database.
 *
 * Figures: accepted/s and latency under the load; the end-to-end rate, the team's events
 * over the time from the load's start until every answered id is a processed submission
 * (read every 100 ms once the load is over; for the baseline each 202 follows its row, so
 * its rate is its rows over its load); and every 202 checked to be exactly one event. A first
 * run through another team's link warms both processes up and is drained before the
 * measured one.
 */
async function oneMachine(bare: Measured): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('ingest_machine');
  try {
    const warmTeam = await benchTeam(db);
    const team = await benchTeam(db);

    const table = 'baseline_submissions';
    const insertProc = await startProcess([path.join(DIST, 'bench/baselines/express-insert.js')], { DATABASE_URL: url });
    let insert: Measured;
    let insertCpu: { app: number | null; postgres: number | null };
    try {
      await flood(`${insertProc.url}/s/baseline`);
      await db.raw(`TRUNCATE ${table}`);
      const app = cpuMeter(async () => [insertProc.child.pid as number]);
      const postgres = cpuMeter(() => backendPids(db, [BASELINE_APPLICATION]));
      await Promise.all([app.start(), postgres.start()]);
      insert = await flood(`${insertProc.url}/s/baseline`, async () => [insertProc.child.pid as number, ...(await backendPids(db, [BASELINE_APPLICATION]))]);
      insertCpu = { app: await app.stop(), postgres: await postgres.stop() };
    } finally {
      await insertProc.stop();
    }
    acceptedOf('Express + INSERT', insert);
    const insertRows = await countOf(db(table));
    const insertRate = insertRows / insert.seconds;

    const prefix = '{bench-ingest-machine}';
    const env = benchEnv(url, { QUEUE_PREFIX: prefix });
    const gateway = await startProcess(serviceArgv('gateway'), env, '/readyz');
    let worker: Proc | null = null;
    const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: null });
    const queue = new Queue('smart-link-submissions', { connection: redis, prefix });
    try {
      await queue.obliterate({ force: true });
      worker = await startProcess(serviceArgv('smart-link-worker'), env, '/readyz');
      console.error(`bench/ingest, one machine: gateway pid ${gateway.child.pid}, smart-link worker pid ${worker.child.pid}`);
      const warmPath = await smartLinkPath(gateway.url, warmTeam.token);
      const path_ = await smartLinkPath(gateway.url, team.token);

      const warmAccepted = acceptedOf('one machine, warm-up', await flood(gateway.url + warmPath));
      const warmed = await eventsReach(db, warmTeam.teamId, warmAccepted, 250);
      if (warmed.events < warmAccepted) throw new Error(`bench/ingest: the warm-up's ${warmAccepted} submissions made ${warmed.events} events`);

      const redisPids = await redisPid(redis);
      // Redis is shared with whatever else runs here; during the load it is mostly ours
      const meters = {
        gateway: cpuMeter(async () => [gateway.child.pid as number]),
        worker: cpuMeter(async () => [(worker as Proc).child.pid as number]),
        redis: cpuMeter(async () => redisPids),
        postgres: cpuMeter(() => backendPids(db, ['gateway', 'smart-link-worker'])),
      };
      await Promise.all(Object.values(meters).map((m) => m.start()));
      const started = performance.now();
      const startedMono = monotonicMicros();
      const ours = await flood(gateway.url + path_, async () => [
        gateway.child.pid as number,
        (worker as Proc).child.pid as number,
        ...redisPids,
        ...(await backendPids(db, ['gateway', 'smart-link-worker'])),
      ]);
      const loadEnded = performance.now();
      const loadEndedMono = monotonicMicros();
      const accepted = acceptedOf('one machine', ours);
      const done = await eventsReach(db, team.teamId, accepted, 100, ours.ids);
      const cpu = { gateway: await meters.gateway.stop(), worker: await meters.worker.stop(), redis: await meters.redis.stop(), postgres: await meters.postgres.stop() };
      if (process.env.BENCH_CPU_PROF) {
        // on the clock of the profiles' sample times, to cut the measured run out of them
        console.error(`bench/ingest, one machine: load ${startedMono}–${loadEndedMono} µs, all events by ${monotonicMicros() - Math.round((performance.now() - done.at) * 1000)} µs (monotonic)`);
      }
      const endToEndSeconds = (done.at - started) / 1000;
      const endToEnd = done.events / endToEndSeconds;
      await eventsSettle(db, team.teamId, 1000);

      const { recorded, events, lost, duplicated } = await exactlyOnce(db, team.teamId, ours.ids);
      console.error(
        `bench/ingest, one machine: ${accepted} answered 202 (${ours.ids.length} ids read) in ${ours.seconds.toFixed(1)} s, all events ${((done.at - loadEnded) / 1000).toFixed(1)} s after the load (${endToEndSeconds.toFixed(1)} s from its start); ` +
          `${recorded} recorded, ${events} events; lost ${lost}, duplicated ${duplicated}${othersNote(ours)}. ` +
          `Express + INSERT: ${insertRows} rows in ${insert.seconds.toFixed(1)} s${othersNote(insert)}`,
      );

      // CPU per 1000 events: ours from the load's start until all are events, the baseline's over its load
      const per1000 = (seconds: number | null, n: number) => (seconds === null ? null : (1e6 * seconds) / n);
      const ourCpu = cpu.gateway === null || cpu.worker === null || cpu.redis === null || cpu.postgres === null ? null : cpu.gateway + cpu.worker + cpu.redis + cpu.postgres;
      const baseCpu = insertCpu.app === null || insertCpu.postgres === null ? null : insertCpu.app + insertCpu.postgres;
      const ms = (x: number | null) => (x === null ? '?' : x.toFixed(0));
      console.error(
        `bench/ingest, one machine: CPU ms per 1000 events: gateway ${ms(per1000(cpu.gateway, done.events))}, worker ${ms(per1000(cpu.worker, done.events))}, Redis ${ms(per1000(cpu.redis, done.events))}, ` +
          `their Postgres backends ${ms(per1000(cpu.postgres, done.events))}; Express + INSERT ${ms(per1000(insertCpu.app, insertRows))}, its backends ${ms(per1000(insertCpu.postgres, insertRows))}`,
      );
      const cpuRows =
        ourCpu === null || baseCpu === null
          ? []
          : [row('ingest', 'one machine: CPU ms per 1000 events (gateway, worker, Redis, Postgres backends) vs Express + INSERT (app, backends)', per1000(ourCpu, done.events) as number, per1000(baseCpu, insertRows) as number, 'ms', { text: 'reported' })];

      return [
        row('ingest', 'one machine (gateway + worker draining): accepted/s vs Express + INSERT', ours.rps, insert.rps, 'req/s', { atLeast: 2 }),
        row('ingest', 'one machine: end-to-end events/s (load + drain) vs Express + INSERT', endToEnd, insertRate, 'ev/s', { atLeast: 1.5 }),
        row('ingest', 'one machine: p50 vs Express + INSERT', ours.p50, insert.p50, 'ms', { text: 'reported' }),
        row('ingest', 'one machine: p99 vs Express + INSERT', ours.p99, insert.p99, 'ms', { atMost: 1 }),
        row('ingest', 'one machine: accepted/s vs bare Express', ours.rps, bare.rps, 'req/s', { text: 'reported' }),
        row('ingest', 'one machine: p99 vs bare Express', ours.p99, bare.p99, 'ms', { text: 'reported' }),
        row('ingest', 'Express + INSERT: req/s vs bare Express', insert.rps, bare.rps, 'req/s', { text: 'reported' }),
        row('ingest', `one machine: lost of ${accepted} accepted`, lost, 0, 'subs', { text: '0', met: lost === 0 }),
        row('ingest', `one machine: duplicated of ${accepted} accepted`, duplicated, 0, 'subs', { text: '0', met: duplicated === 0 }),
        ...cpuRows,
      ];
    } finally {
      await worker?.stop();
      await gateway.stop();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      redis.disconnect();
    }
  } finally {
    await db.destroy();
  }
}

/**
 * bench/ingest: POST /s/{key} with 100 connections and an 8-field form, measured two ways
 * (BENCH_INGEST_MODE): the gateway alone, and gateway and worker on one machine. Bare
 * Express answering 202 is measured once for both.
 */
export async function benchIngest(): Promise<{ rows: BenchRow[]; ingestRate?: number; groupSize?: number }> {
  if (!['both', 'gateway', 'machine'].includes(MODE)) throw new Error(`BENCH_INGEST_MODE must be gateway, machine or both (not "${MODE}")`);
  const bare = await bareExpress();
  const rows: BenchRow[] = [];
  let alone: Awaited<ReturnType<typeof gatewayAlone>> | undefined;
  if (MODE !== 'machine') {
    alone = await gatewayAlone(bare);
    rows.push(...alone.rows);
  }
  if (MODE !== 'gateway') rows.push(...(await oneMachine(bare)));
  return { rows, ingestRate: alone?.ingestRate, groupSize: alone?.groupSize };
}
