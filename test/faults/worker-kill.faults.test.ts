import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { extractionFinishedChannel, extractionJob } from '../../shared/queues/extraction.job';
import { mailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, drained, isolatedPrefix, logLines, spawnWorker } from '../helpers/service-processes';
import { type SinkAnswer, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditEmails, auditSubmissions } from './fault-checks';

/**
 * Each worker as its own process, killed with SIGKILL in the middle of its jobs and started
 * again: nothing accepted is lost, nothing is done twice. WORKER_LOCK_MS is short so the
 * dead worker's jobs (their locks still held) are taken over within seconds.
 */
jest.setTimeout(120_000);

const prefix = isolatedPrefix('worker_kill');
const LOCK_MS = '2000';
const workerEnv = (extra: Record<string, string> = {}) => ({ QUEUE_PREFIX: prefix, WORKER_LOCK_MS: LOCK_MS, ...extra });

let gw: TestGateway;
const procs: Spawned[] = [];
const queues: Queue[] = [];
const queueOf = (name: string) => {
  const queue = new Queue(name, { connection: gw.redis, prefix });
  queues.push(queue);
  return queue;
};

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  for (const q of queues) {
    await q.obliterate({ force: true });
    await q.close();
  }
  await gw.close();
});

async function start(kind: Parameters<typeof spawnWorker>[0], env: Record<string, string>) {
  const spawned = await spawnWorker(kind, env);
  procs.push(spawned);
  return spawned;
}

describe('the smart-link worker', () => {
  it('killed mid-batch and restarted: every accepted submission is exactly one event', async () => {
    const tally = new FaultTally('2a. smart-link worker SIGKILL mid-batch, restart', 'submission');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const queue = queueOf(smartLinkJob.queue);
    const first = await start('smart-link-worker', workerEnv());
    const accepted = new Map<string, string>(); // sls id → title
    const rows = () => gw.db('smart_link_submissions').where({ team_id: team.teamId }).count<Array<{ n: number }>>('* as n');
    const sends = Array.from({ length: 400 }, async (_, i) => {
      const title = `Worker kill ${i}`;
      const res = await tally.send(() => submitForm(link.url, { title, start: '2030-04-01 10:00', duration: '30' }));
      if (res?.status === 202) accepted.set(res.body.data.id as string, title);
    });
    // Killed while it writes: some submissions recorded, not all.
    await waitFor(async () => (await rows())[0].n > 0, { what: 'the first batch', timeoutMs: 30_000 });
    await crash(first);
    await Promise.all(sends);
    expect(accepted.size).toBe(400);
    expect((await rows())[0].n).toBeLessThan(400);

    const second = await start('smart-link-worker', workerEnv());
    await waitFor(() => drained(queue), { what: 'the queue to drain', timeoutMs: 60_000 });
    const audit = await auditSubmissions(gw.db, team.teamId, accepted);
    Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
    tally.save();
    expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: 0 });
    expect(await queue.getFailedCount()).toBe(0);
    second.proc.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});

/**
 * A stand-in for the model endpoint (EXTRACT_LLM_URL): it answers the first `answered`
 * requests, then holds every request without answering, so the worker is caught in the
 * middle of its jobs when it is killed.
 */
async function startModelEndpoint(answered: number) {
  let requests = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      if (++requests > answered) {
        held.push(res);
        return;
      }
      const asked = JSON.parse(JSON.parse(body).messages[1].content) as { text: string };
      const answer = { title: `Model read: ${asked.text.split(' next')[0]}`, location: 'Model Room', date_start: '2030-02-01T09:00', date_end: '2030-02-01T10:00', timezone: 'UTC', is_all_day: false };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(answer) } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`,
    held,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the extraction worker', () => {
  it('killed while it works and restarted: every extraction completes exactly once, none stays pending', async () => {
    const tally = new FaultTally('2b. extraction worker SIGKILL mid-job, restart', 'extraction');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const queue = queueOf(extractionJob.queue);
    const ANSWERED = 20;
    const TOTAL = 200;
    const model = await startModelEndpoint(ANSWERED);
    // Each finished extraction is announced once, by the worker that wrote it: a second
    // announcement would be a second completion.
    const announced = new Map<string, number>();
    const sub = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
    sub.on('message', (_channel: string, id: string) => announced.set(id, (announced.get(id) ?? 0) + 1));
    await sub.subscribe(extractionFinishedChannel(prefix));
    try {
      const first = await start('extraction-worker', workerEnv({ EXTRACT_LLM_URL: model.url, EXTRACT_LLM_TIMEOUT_MS: '60000' }));
      const texts = new Map<string, number>(); // ext id → which text
      await Promise.all(
        Array.from({ length: TOTAL }, async (_, i) => {
          const res = await tally.send(() =>
            team.api.post('/api/events/extract', { text: `Review for case R${i} next Tuesday at 1pm at Cafe Luna`, timezone: 'UTC', reference_date: '2030-01-01T09:00:00Z' }),
          );
          if (res?.status === 202) texts.set(res.body.data.id as string, i);
        }),
      );
      expect(texts.size).toBe(TOTAL);
      // The model answered some (finished and announced), and holds the worker's next jobs.
      await waitFor(() => announced.size === ANSWERED && model.held.length > 0, { what: 'the worker mid-job', timeoutMs: 30_000 });
      await crash(first);
      expect(await queue.getActiveCount()).toBeGreaterThan(0); // their locks are still held

      const second = await start('extraction-worker', workerEnv());
      await waitFor(() => drained(queue), { what: 'the extractions queue to drain', timeoutMs: 60_000 });
      const rows: Array<{ uid: string; status: string; result: { title: string; location: string; date_start: string } | null }> = await gw
        .db('extractions')
        .where({ team_id: team.teamId })
        .select('uid', 'status', 'result');
      const byModel = rows.filter((r) => r.result?.location === 'Model Room');
      expect(byModel).toHaveLength(ANSWERED);
      const right = (r: (typeof rows)[number]) => {
        const i = texts.get(`ext_${r.uid}`);
        if (r.status !== 'completed' || !r.result || i === undefined) return false;
        const title = `Review for case R${i}`;
        return r.result.location === 'Model Room'
          ? r.result.title === `Model read: ${title}`
          : r.result.title === title && r.result.date_start === '2030-01-08T13:00:00+00:00' && r.result.location === 'Cafe Luna';
      };
      tally.lost = TOTAL - rows.filter(right).length;
      tally.duplicated = [...announced.values()].reduce((n, c) => n + c - 1, 0);
      tally.note = `${ANSWERED} read by the model before the kill, ${TOTAL - ANSWERED} by the rules after the restart; each completion announced once`;
      tally.save();
      expect(tally.lost).toBe(0);
      expect(tally.duplicated).toBe(0);
      expect(announced.size).toBe(TOTAL);
      expect(await queue.getFailedCount()).toBe(0);
      second.proc.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    } finally {
      await closeRedis(sub);
      await model.close();
    }
  });
});

describe('the mail worker', () => {
  let sink: SmtpSink;
  let answer: (tries: number) => SinkAnswer = () => 'accept';
  beforeAll(async () => {
    sink = await startSmtpSink({ answer: ({ tries }) => answer(tries) });
  });
  afterAll(() => sink.close());

  const mailEnv = () =>
    workerEnv({
      SMTP_URL: sink.url,
      MAIL_POOL_SIZE: '2',
      MAIL_CONCURRENCY: '4',
      MAIL_RATE_PER_SECOND: '0',
      // A crashed worker's jobs are taken over after a second instead of thirty.
      WORKER_LOCK_MS: '1000',
    });

  it('killed mid-send and restarted: every message is delivered exactly once', async () => {
    const tally = new FaultTally('2c. mail worker SIGKILL mid-send, restart', 'email');
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'All hands', date_start: '2026-11-02 15:00', date_end: '2026-11-02 16:00', timezone: 'UTC' })).body.data;
    const emails = Array.from({ length: 20 }, (_, i) => `crew${i}@example.test`);

    // The first five messages go through; from the sixth on, the server takes the data and
    // then keeps the client waiting for its reply, as a slow server does.
    let accepted = 0;
    answer = () => (accepted++ < 5 ? 'accept' : 'hold');
    const queue = queueOf(mailJob.queue);
    const first = await start('mail-worker', mailEnv());
    const invited = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
    expect(invited.status).toBe(200);
    tally.acceptedItems(emails.length);

    // Both pooled connections are waiting on a reply, and the five accepted are recorded:
    // the kill lands in the middle of sends, not between a reply and its record.
    await waitFor(() => sink.held.length === 2, { what: 'two messages in flight' });
    const sentRows = () => gw.db('deliveries').where({ status: 'sent' }).whereIn('email', emails).count({ n: '*' }).first();
    await waitFor(async () => (await sentRows())?.n === 5, { what: 'the accepted five recorded' });
    const claimed = await gw.db('deliveries').whereIn('email', emails).whereNotNull('claim_token').pluck('email');
    expect(claimed.length).toBeGreaterThanOrEqual(2);

    await crash(first);
    expect((await first.exited).signal).toBe('SIGKILL');
    // The held messages were never answered and their connections are gone: never delivered.
    await waitFor(() => sink.held.every((h) => h.dropped()), { what: 'the in-flight messages dropped' });
    for (const held of sink.held) held.answer('accept');
    expect(sink.received).toHaveLength(5);

    answer = () => 'accept';
    const second = await start('mail-worker', mailEnv());
    await waitFor(async () => (await drained(queue)) && (await sentRows())?.n === 20, { what: 'all twenty recorded sent', timeoutMs: 25_000 });
    Object.assign(tally, await auditEmails(gw.db, sink, emails));
    tally.save();
    expect(tally.lost).toBe(0);
    expect(tally.duplicated).toBe(0);
    expect(sink.received).toHaveLength(20);
    // The interrupted ones were claimed twice: once by the killed worker, once after the restart.
    const retried = await gw.db('deliveries').whereIn('email', claimed).pluck('attempts');
    expect(retried.every((n: number) => n === 2)).toBe(true);
    await waitFor(() => second.stdout().includes('an earlier attempt stopped mid-send; sending again'), { what: 'the resend log line' });
    // The invitation's request can be followed into the worker's lines for its jobs.
    const requestId = invited.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    await waitFor(() => logLines(second, 'mail job finished').some((line) => line.reqId === requestId), { what: 'a mail job line with the request id' });

    second.proc.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(second.stdout()).toContain('shutdown complete');
  });
});
