import { Queue } from 'bullmq';
import { extractionJob } from '../../shared/queues/extraction.job';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, isolatedPrefix, logLines, spawnWorker } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';

/**
 * A text past the time budget, end to end: posted to the API, read by a real extraction
 * worker process (the built one, with its thread pool), answered `failed` with
 * `extraction_timeout`, not tried again; another team's text queued right after it is read.
 *
 * No text the rules read today comes near the real budget (1 s of CPU; the costliest known
 * take tens of milliseconds), so this worker gets EXTRACT_TIMEOUT_MS=12: an 8000-character
 * text of number ranges takes a warmed-up thread 24 to 60 ms of CPU, a one-line text under
 * 7 ms even the first time its zone is read. The budget is what is small here, not the
 * text's cost. It counts the thread's own CPU, so the other processes of the test do not
 * push the one-liner over it.
 */
jest.setTimeout(60_000);

const prefix = isolatedPrefix('extract_timeout');
let gw: TestGateway;
let worker: Spawned;
let queue: Queue;

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  worker = await spawnWorker('extraction-worker', { QUEUE_PREFIX: prefix, EXTRACT_TIMEOUT_MS: '12' });
  queue = new Queue(extractionJob.queue, { connection: gw.redis, prefix });
});
afterAll(async () => {
  if (worker) await crash(worker);
  await queue?.obliterate({ force: true });
  await queue?.close();
  await gw?.close();
});

const HOSTILE = '1-2, '.repeat(1600);
const reference = { timezone: 'America/New_York', reference_date: '2026-03-05T09:00:00-05:00' };

it("fails a text past the budget with extraction_timeout, once, while another team's text is read", async () => {
  const [teamA, teamB] = await Promise.all([gw.newTeam(), gw.newTeam()]);
  const hostile = await teamA.api.post('/api/events/extract', { text: HOSTILE, ...reference });
  const other = await teamB.api.post('/api/events/extract', { text: 'Lunch tomorrow at 1pm at Cafe Luna', ...reference });
  expect([hostile.status, other.status]).toEqual([202, 202]);
  const finished = (team: typeof teamA, id: string) =>
    waitFor(async () => {
      const got = await team.api.get(`/api/events/extract/${id}`);
      return got.body.data.status !== 'pending' && got.body.data;
    }, { what: `${id} to finish`, timeoutMs: 20_000 });

  const [a, b] = await Promise.all([finished(teamA, hostile.body.data.id), finished(teamB, other.body.data.id)]);
  expect(a).toMatchObject({ status: 'failed', result: null, error: 'extraction_timeout' });
  expect(b).toMatchObject({ status: 'completed', error: null, result: { title: 'Lunch', location: 'Cafe Luna', date_start: '2026-03-06T13:00:00-05:00' } });

  // Not tried again: its job ran once and completed (the failure is the text's answer).
  const job = await queue.getJob(hostile.body.data.id);
  expect(job && { state: await job.getState(), started: job.attemptsStarted, returned: job.returnvalue }).toEqual({
    state: 'completed',
    started: 1,
    returned: { status: 'failed', skipped: false },
  });
  await waitFor(() => logLines(worker, 'extraction finished').some((l) => l.extraction === hostile.body.data.id), { what: 'the log line' });
  expect(logLines(worker, 'extraction finished').filter((l) => l.extraction === hostile.body.data.id)).toEqual([
    expect.objectContaining({ status: 'failed', error: 'extraction_timeout' }),
  ]);
  expect(logLines(worker, 'extraction took longer than its budget; its thread was stopped')).toEqual([expect.objectContaining({ timeoutMs: 12, chars: 7999 })]);
});
