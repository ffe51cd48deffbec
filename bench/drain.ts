import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { newUid } from '../shared/ids/ids';
import { GROUP_PREFIX_LENGTH, groupJobId, type SmartLinkJob, type SmartLinkSubmission, type SubmissionLink } from '../shared/queues/smart-link.job';
import { serviceArgv, startWorker } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';

const SUBMISSIONS = Number(process.env.BENCH_DRAIN_SUBMISSIONS ?? 100_000);
const PREFIX = '{bench-drain}';
/**
 * Submissions per job when bench/ingest has not measured what a flooded gateway makes
 * (its figure is used when it ran first): about what it measured on this machine.
 */
const DEFAULT_GROUP = 32;

function job(link: SubmissionLink, n: number): SmartLinkSubmission {
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
 * The submissions are queued as a flooded gateway queues them: grouped, `groupSize` to a
 * job (bench/ingest's average when it ran first).
 */
export async function benchDrain(ingest?: { rate: number; groupSize: number }): Promise<BenchRow[]> {
  const groupSize = Math.max(1, Math.round(Number(process.env.BENCH_DRAIN_GROUP ?? ingest?.groupSize ?? DEFAULT_GROUP)));
  const { url, db } = await freshDatabase('drain');
  const team = await benchTeam(db);
  const env = benchEnv(url, { QUEUE_PREFIX: PREFIX });
  const redis = new Redis(env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const queue = new Queue<SmartLinkJob>('smart-link-submissions', { connection: redis, prefix: PREFIX });
  try {
    await queue.obliterate({ force: true });
    const [cal] = await db('calendars').insert({ uid: newUid(), team_id: team.teamId, name: 'Drain', timezone: 'Europe/Berlin' }).returning('id');
    const [link] = await db('smart_links')
      .insert({ uid: newUid(), key: newUid(), team_id: team.teamId, calendar_id: cal.id, name: 'Drain', secret_enc: 'unused' })
      .returning('id');
    const ref = { id: link.id as number, teamId: team.teamId, calendarId: cal.id as number };

    console.error(`bench/drain: queueing ${SUBMISSIONS} submissions, ${groupSize} to a job…`);
    await queue.pause(); // the worker starts on a queue already full
    for (let i = 0; i < SUBMISSIONS; i += 1000) {
      const jobs = [];
      for (let g = i; g < Math.min(i + 1000, SUBMISSIONS); g += groupSize) {
        const prefix = newUid().slice(0, GROUP_PREFIX_LENGTH);
        const submissions = Array.from({ length: Math.min(groupSize, SUBMISSIONS - g, i + 1000 - g) }, (_, k) => {
          const { link: _link, ...entry } = job(ref, g + k);
          return { ...entry, submission: prefix + entry.submission.slice(GROUP_PREFIX_LENGTH) };
        });
        jobs.push({ name: 'submissions', data: { link: ref, submissions }, opts: { jobId: groupJobId(prefix), removeOnComplete: true, attempts: 1000, backoff: { type: 'capped' } } });
      }
      await queue.addBulk(jobs);
    }

    // The clock starts once the worker is up (its start-up is not draining).
    let ready: () => void = () => undefined;
    const up = new Promise<void>((resolve) => (ready = resolve));
    const worker = startWorker(serviceArgv('smart-link-worker'), env, (chunk) => chunk.includes('smart-link-worker started') && ready());
    await up;
    await queue.resume();
    const started = Date.now();
    for (;;) {
      const [{ count }] = await db('smart_link_submissions').count<{ count: number }[]>('* as count');
      if (count >= SUBMISSIONS) break;
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 250);
      });
    }
    const drainSeconds = (Date.now() - started) / 1000;
    await worker.stop();
    const [{ events }] = await db('events').where({ team_id: team.teamId }).count<{ events: number }[]>('* as events');
    if (events !== SUBMISSIONS) throw new Error(`bench/drain: ${events} events for ${SUBMISSIONS} submissions`);

    // Baseline: the same rows straight from a script, 500 per INSERT.
    const raw = Array.from({ length: SUBMISSIONS }, (_, n) => job(ref, n));
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
    const drainRate = SUBMISSIONS / drainSeconds;
    const rawRate = SUBMISSIONS / rawSeconds;
    console.error(`bench/drain: worker ${drainSeconds.toFixed(1)} s, raw inserts ${rawSeconds.toFixed(1)} s for ${SUBMISSIONS}`);
    const rows = [row('drain', `worker drain, ${SUBMISSIONS} submissions (${groupSize} a job) → events`, drainRate, rawRate, 'subs/s', { atLeast: 0.3 })];
    if (ingest) rows.push(row('drain', 'drain rate vs ingest rate (bench/ingest)', drainRate, ingest.rate, 'subs/s', { atLeast: 1 }));
    return rows;
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await db.destroy();
  }
}
