import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { newUid } from '../shared/ids/ids';
import type { SmartLinkJob } from '../shared/queues/smart-link.job';
import { serviceArgv, startWorker } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

const JOBS = Number(process.env.BENCH_DRAIN_JOBS ?? 100_000);
const PREFIX = '{bench-drain}';

function job(link: SmartLinkJob['link'], n: number): SmartLinkJob {
  const start = new Date(Date.UTC(2027, 0, 1) + n * 60_000).toISOString();
  const end = new Date(Date.UTC(2027, 0, 1) + n * 60_000 + 1_800_000).toISOString();
  return {
    submission: newUid(),
    link,
    receivedAt: new Date().toISOString(),
    event: {
      uid: newUid(),
      title: `Drained ${n}`,
      description: 'Requested through the website contact form.',
      location: 'Video call',
      internal_name: null,
      is_all_day: false,
      timezone: 'Europe/Berlin',
      date_start: start,
      date_end: end,
      ends_at: end,
      status: 'approved',
    },
  };
}

/**
 * bench/drain: 100k queued submissions turned into events by the worker, beside the same
 * rows (events and submission records) inserted by multi-row INSERTs of 500 from a script.
 */
export async function benchDrain(ingestRate?: number): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('drain');
  const team = await benchTeam(db);
  const env = benchEnv(url, { QUEUE_PREFIX: PREFIX });
  const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const queue = new Queue('smart-link-submissions', { connection: redis, prefix: PREFIX });
  try {
    await queue.obliterate({ force: true });
    const [cal] = await db('calendars').insert({ uid: newUid(), team_id: team.teamId, name: 'Drain', timezone: 'Europe/Berlin' }).returning('id');
    const [link] = await db('smart_links')
      .insert({ uid: newUid(), key: newUid(), team_id: team.teamId, calendar_id: cal.id, name: 'Drain', secret_enc: 'unused' })
      .returning('id');
    const ref = { id: link.id as number, teamId: team.teamId, calendarId: cal.id as number };

    console.error(`bench/drain: queueing ${JOBS} submissions…`);
    for (let i = 0; i < JOBS; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => job(ref, i + k));
      await queue.addBulk(batch.map((data) => ({ name: 'submission', data, opts: { jobId: data.submission, attempts: 1000, backoff: { type: 'capped' } } })));
    }

    const started = Date.now();
    const worker = startWorker(serviceArgv('smart-link-worker'), env);
    for (;;) {
      const [{ count }] = await db('smart_link_submissions').count<{ count: number }[]>('* as count');
      if (count >= JOBS) break;
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 250);
      });
    }
    const drainSeconds = (Date.now() - started) / 1000;
    await worker.stop();
    const [{ events }] = await db('events').where({ team_id: team.teamId }).count<{ events: number }[]>('* as events');
    if (events !== JOBS) throw new Error(`bench/drain: ${events} events for ${JOBS} submissions`);

    // Baseline: the same rows straight from a script, 500 per INSERT.
    const raw = Array.from({ length: JOBS }, (_, n) => job(ref, n));
    const rawStart = Date.now();
    for (let i = 0; i < raw.length; i += 500) {
      await db.transaction(async (trx) => {
        const slice = raw.slice(i, i + 500);
        const ids = await trx('events')
          .insert(slice.map((j) => ({ ...j.event, team_id: ref.teamId, calendar_id: ref.calendarId, description: `<p>${j.event.description}</p>` })))
          .returning('id');
        await trx('smart_link_submissions').insert(
          slice.map((j, k) => ({ uid: j.submission, smart_link_id: ref.id, team_id: ref.teamId, status: 'processed', event_id: ids[k].id, received_at: j.receivedAt })),
        );
      });
    }
    const rawSeconds = (Date.now() - rawStart) / 1000;
    const drainRate = JOBS / drainSeconds;
    const rawRate = JOBS / rawSeconds;
    console.error(`bench/drain: worker ${drainSeconds.toFixed(1)} s, raw inserts ${rawSeconds.toFixed(1)} s for ${JOBS}`);
    const rows = [row('drain', `worker drain, ${JOBS} submissions → events`, drainRate, rawRate, 'subs/s', { atLeast: 0.3 })];
    if (ingestRate) rows.push(row('drain', 'drain rate vs ingest rate (bench/ingest)', drainRate, ingestRate, 'subs/s', { atLeast: 1 }));
    return rows;
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await db.destroy();
  }
}
