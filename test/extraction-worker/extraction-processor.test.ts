import { UnrecoverableError } from 'bullmq';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { loadConfig } from '../../shared/config/config';
import { createDb, type Knex } from '../../shared/db/knex';
import { newUid } from '../../shared/ids/ids';
import { createLogger } from '../../shared/logging/logger';
import { extractionFinishedChannel, extractionJob } from '../../shared/queues/extraction.job';
import { Producer } from '../../shared/queues/queues';
import { closeRedis, createRedis, type Redis } from '../../shared/queues/redis';
import { type ExtractionDeps, extractionWorker, processExtraction } from '../../services/extraction-worker/extraction.worker';
import { ExtractionFailure, type ExtractionResult, type Extractor } from '../../services/extraction-worker/extractor/extractor';
import { RulesExtractor } from '../../services/extraction-worker/extractor/rules-extractor';
import { testEnv } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';

/** The extraction worker's processor against the run's Postgres, directly and through the queue. */
const config = loadConfig(testEnv());
const log = createLogger('extraction-test', 'silent');
let db: Knex;
let redis: Redis;
let deps: ExtractionDeps;
let teamId: number;

beforeAll(async () => {
  db = createDb(config.databaseUrl, { poolMax: 4 });
  redis = createRedis(config.redis, 'client');
  redis.on('error', () => undefined);
  await waitFor(() => redis.status === 'ready', { what: 'Redis' });
  deps = { db, redis, config };
  teamId = (await createTeamWithOwner(db, { name: 'Extractors', email: `extract-${newUid().toLowerCase()}@example.test`, plan: 'pro', eventLimit: null })).teamId;
});
afterAll(async () => {
  await db.destroy();
  await closeRedis(redis);
});

async function pending(text = 'Lunch tomorrow at noon at Cafe Luna'): Promise<{ id: string; uid: string }> {
  const uid = newUid();
  await db('extractions').insert({ uid, team_id: teamId, text, timezone: 'America/New_York', reference_date: '2026-03-05T15:00:00Z' });
  return { id: `ext_${uid}`, uid };
}
const rowOf = (uid: string) => db('extractions').first('status', 'result', 'error', 'completed_at').where({ uid });

const rules = new RulesExtractor();
const fixed = (result: Partial<ExtractionResult>): Extractor => ({
  name: 'fixed',
  extract: async (input) => ({ ...(await rules.extract(input)), ...result }),
});

describe('processing an extraction', () => {
  it('completes it, then leaves it as it is when the same job comes again', async () => {
    const { id, uid } = await pending();
    expect(await processExtraction(deps, rules, { extractionId: id, meta: { requestId: 'r1' } }, log)).toEqual({ status: 'completed', skipped: false });
    const first = await rowOf(uid);
    expect(first).toMatchObject({
      status: 'completed',
      error: null,
      result: { title: 'Lunch', location: 'Cafe Luna', date_start: '2026-03-06T12:00:00-05:00', date_end: '2026-03-06T13:00:00-05:00' },
    });
    // A second delivery, even one whose extractor would answer differently, changes nothing.
    expect(await processExtraction(deps, fixed({ title: 'Something else' }), { extractionId: id }, log)).toEqual({ status: 'completed', skipped: true });
    expect(await rowOf(uid)).toEqual(first);
  });

  it('writes once when two deliveries run at the same time', async () => {
    const { id, uid } = await pending();
    // Both deliveries read the pending row before either writes.
    let entered = 0;
    let release: () => void = () => undefined;
    const bothInside = new Promise<void>((resolve) => (release = resolve));
    const racing = (title: string): Extractor => ({
      name: title,
      extract: async (input) => {
        if (++entered === 2) release();
        await bothInside;
        return { ...(await rules.extract(input)), title };
      },
    });
    const outcomes = await Promise.all([processExtraction(deps, racing('A'), { extractionId: id }, log), processExtraction(deps, racing('B'), { extractionId: id }, log)]);
    expect(outcomes.map((o) => o.skipped).sort()).toEqual([false, true]);
    const winner = outcomes[0].skipped ? 'B' : 'A';
    expect((await rowOf(uid))?.result.title).toBe(winner);
  });

  it('records a text it cannot read as failed, with the reason', async () => {
    const { id, uid } = await pending('Please bring snacks for everyone');
    expect(await processExtraction(deps, rules, { extractionId: id }, log)).toEqual({ status: 'failed', skipped: false });
    expect(await rowOf(uid)).toMatchObject({ status: 'failed', result: null, error: 'No date or time found in the text.' });

    const german = await pending('Teammeeting morgen um 10 Uhr im Büro');
    expect(await processExtraction(deps, rules, { extractionId: german.id }, log)).toEqual({ status: 'failed', skipped: false });
    expect(await rowOf(german.uid)).toMatchObject({ status: 'failed', result: null, error: 'unsupported_language' });

    const crashed = await pending();
    const broken: Extractor = { name: 'broken', extract: async () => Promise.reject(new TypeError('x is undefined')) };
    await processExtraction(deps, broken, { extractionId: crashed.id }, log);
    expect(await rowOf(crashed.uid)).toMatchObject({ status: 'failed', error: 'The text could not be read.' });

    const refused = await pending();
    const refusing: Extractor = { name: 'refusing', extract: async () => Promise.reject(new ExtractionFailure('No event found in the text.')) };
    await processExtraction(deps, refusing, { extractionId: refused.id }, log);
    expect(await rowOf(refused.uid)).toMatchObject({ status: 'failed', error: 'No event found in the text.' });
  });

  it('rejects payloads that can never succeed as unrecoverable', async () => {
    for (const data of [{}, { extractionId: 'evt_0000000000000000' }, { extractionId: 42 }, { extractionId: 'ext_0000000000000000' }]) {
      await expect(processExtraction(deps, rules, data, log)).rejects.toBeInstanceOf(UnrecoverableError);
    }
  });

  it('announces the finished id to waiting gateways', async () => {
    const { id } = await pending();
    const sub = createRedis(config.redis, 'worker');
    const heard: string[] = [];
    try {
      sub.on('message', (_channel: string, message: string) => heard.push(message));
      await sub.subscribe(extractionFinishedChannel(config.queuePrefix));
      await processExtraction(deps, rules, { extractionId: id }, log);
      await waitFor(() => heard.includes(id), { what: 'the announcement' });
      // Other tests' extractions are announced on the same channel; this one is announced once.
      expect(heard.filter((h) => h === id)).toEqual([id]);
    } finally {
      await closeRedis(sub);
    }
  });
});

describe('through the queue', () => {
  it('a redelivered job finds the extraction finished and changes nothing', async () => {
    const worker = await startWorker((ctx) => extractionWorker(ctx));
    const producer = new Producer(extractionJob, redis, config.queuePrefix, log);
    try {
      const { id, uid } = await pending();
      const firstJob = await producer.add('extract', { extractionId: id }, { jobId: id });
      // One read of the job: its finish time and return value are written together, whereas
      // a state read after it could see a job finished since (its value read as null).
      const returned = async (jobId: string) => {
        const job = await producer.queue.getJob(jobId);
        return job?.finishedOn !== undefined && !job.failedReason && job.returnvalue;
      };
      expect(await waitFor(() => returned(firstJob), { what: 'the first job' })).toEqual({ status: 'completed', skipped: false });
      const first = await rowOf(uid);
      // The same extraction queued again (as after a lost acknowledgement), under another job id.
      const again = await producer.add('extract', { extractionId: id }, { jobId: `${id}-again` });
      expect(await waitFor(() => returned(again), { what: 'the second job' })).toEqual({ status: 'completed', skipped: true });
      expect(await rowOf(uid)).toEqual(first);
    } finally {
      await producer.close();
      await worker.close();
    }
  });
});
