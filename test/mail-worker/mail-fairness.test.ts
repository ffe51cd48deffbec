import { Queue } from 'bullmq';
import type { MailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';
import { isolatedPrefix } from '../helpers/service-processes';

const prefix = isolatedPrefix('mail_fair');
let sink: SmtpSink;
let gw: TestGateway;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix, MAIL_BATCH_SIZE: '10' });
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

async function eventWithInvitees(team: TestTeam, title: string, emails: string[]) {
  const cal = (await team.api.post('/api/calendars', { name: title, timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: '2026-10-01 10:00', date_end: '2026-10-01 11:00', timezone: 'UTC' })).body.data;
  const path = `/api/calendars/${cal.public_id}/events/${evt.public_id}`;
  for (let i = 0; i < emails.length; i += 500) {
    expect((await team.api.post(`${path}/invites`, { invitees: emails.slice(i, i + 500).map((email) => ({ email })) })).status).toBe(200);
  }
  return path;
}

describe('fair ordering', () => {
  it("does not hold another team's single invitation behind a 500-invitee cancellation queued before it", async () => {
    const big = await gw.newTeam();
    const small = await gw.newTeam();
    const crowd = Array.from({ length: 500 }, (_, i) => `guest${i}@big.example.test`);
    const bigEvent = await eventWithInvitees(big, 'Conference', crowd);
    // No worker yet: the 500 invitations and then the 500 cancellations wait in the queue…
    expect((await big.api.delete(bigEvent, { notify_invitees: true })).body.data.invitees_notified).toBe(500);
    // …and only then does the other team invite one person.
    await eventWithInvitees(small, 'Coffee', ['solo@small.example.test']);

    expect(await queue.count()).toBe(101); // batches of 10: 50 + 50 + 1

    // One job at a time and one connection, so the order of arrival is the order of service.
    const worker: TestWorker<MailJob, MailOutcome> = await startWorker((ctx) => mailWorker(ctx), {
      QUEUE_PREFIX: prefix,
      SMTP_URL: sink.url,
      MAIL_CONCURRENCY: '1',
      MAIL_POOL_SIZE: '1',
      MAIL_RATE_PER_SECOND: '0',
    });
    try {
      await waitFor(() => sink.for('solo@small.example.test').length === 1, { what: 'the single invitation', timeoutMs: 20_000 });
      const position = sink.received.findIndex((m) => m.to.includes('solo@small.example.test'));
      // Teams take turns (shared/mail/mail-fairness.ts): the big team's 100 batches hold its
      // next 100 turns, the small team's one batch takes the turn after the batch under way,
      // so it is served after one batch of ten, not after the 1000 messages queued before it.
      expect(position).toBe(10);
      expect(sink.received.slice(0, 10).map((m) => m.parsed.subject?.split(':')[0])).toEqual(Array(10).fill('Invitation'));
    } finally {
      await worker.close();
    }
  });
});
