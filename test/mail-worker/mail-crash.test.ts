import { Queue } from 'bullmq';
import type { MailJob } from '../../shared/queues/mail-jobs';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { startGateway, testEnv, type TestGateway } from '../helpers/gateway';
import { dist, spawnNode, type Spawned } from '../helpers/processes';
import { type SinkAnswer, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';

/**
 * The mail worker as its own process (built entry point), killed with SIGKILL while
 * messages are in the middle of their SMTP exchange, then started again.
 */
const prefix = `{mail-crash-${process.pid}}`;
let sink: SmtpSink;
let gw: TestGateway;
let answer: (tries: number) => SinkAnswer = () => 'accept';
const running: Spawned[] = [];
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink({ answer: ({ tries }) => answer(tries) });
  gw = await startGateway({ QUEUE_PREFIX: prefix });
});
afterAll(async () => {
  for (const s of running) if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

const startMailWorker = () => {
  const proc = spawnNode(
    dist('mail-worker/main.js'),
    testEnv({
      QUEUE_PREFIX: prefix,
      SMTP_URL: sink.url,
      LOG_LEVEL: 'info',
      MAIL_POOL_SIZE: '2',
      MAIL_CONCURRENCY: '4',
      MAIL_RATE_PER_SECOND: '0',
      // A crashed worker's jobs are taken over after a second instead of thirty.
      WORKER_LOCK_MS: '1000',
    }),
  );
  running.push(proc);
  return proc;
};

describe('a mail worker killed mid-send', () => {
  it('delivers every message exactly once after a restart', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'All hands', date_start: '2026-11-02 15:00', date_end: '2026-11-02 16:00', timezone: 'UTC' })).body.data;
    const emails = Array.from({ length: 20 }, (_, i) => `crew${i}@example.test`);

    // The first five messages go through; from the sixth on, the server takes the data and
    // then keeps the client waiting for its reply, as a slow server does.
    let accepted = 0;
    answer = () => (accepted++ < 5 ? 'accept' : 'hold');
    const first = startMailWorker();
    await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });

    // Both pooled connections are waiting on a reply, and the five accepted are recorded:
    // the kill lands in the middle of sends, not between a reply and its record.
    await waitFor(() => sink.held.length === 2, { what: 'two messages in flight' });
    const sentRows = () => gw.db('deliveries').where({ status: 'sent' }).whereIn('email', emails).count({ n: '*' }).first();
    await waitFor(async () => (await sentRows())?.n === 5, { what: 'the accepted five recorded' });
    const claimed = await gw.db('deliveries').whereIn('email', emails).whereNotNull('claim_token').pluck('email');
    expect(claimed.length).toBeGreaterThanOrEqual(2);

    first.proc.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // The held messages were never answered and their connections are gone: never delivered.
    await waitFor(() => sink.held.every((h) => h.dropped()), { what: 'the in-flight messages dropped' });
    for (const held of sink.held) held.answer('accept');
    expect(sink.received).toHaveLength(5);

    answer = () => 'accept';
    const second = startMailWorker();
    await waitFor(async () => (await sentRows())?.n === 20, { what: 'all twenty recorded sent', timeoutMs: 25_000 });
    for (const email of emails) expect(sink.for(email)).toHaveLength(1);
    expect(sink.received).toHaveLength(20);
    // The interrupted ones were claimed twice: once by the killed worker, once after the restart.
    const retried = await gw.db('deliveries').whereIn('email', claimed).pluck('attempts');
    expect(retried.every((n: number) => n === 2)).toBe(true);
    expect(second.stdout()).toContain('an earlier attempt stopped mid-send; sending again');

    second.proc.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(second.stdout()).toContain('shutdown complete');
  });
});
