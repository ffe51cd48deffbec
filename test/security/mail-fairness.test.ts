import { Queue } from 'bullmq';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import type { MailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';

/**
 * One team's fan-outs do not hold back another team's mail: the emails queue takes teams in
 * turns, a batch each. Team A makes many fan-outs (800 invitations, in calls of 50, one
 * batch each), then team B sends one invitation: B's message arrives among the first
 * of A's, not after them. And a team whose big fan-out has gone out starts again at the
 * queue's present, not behind its past: once A's are sent, B queues many and A one, and A's
 * comes first. Real mail through an SMTP sink; the worker starts once everything is queued,
 * so the order is the queue's, not a race.
 */
jest.setTimeout(180_000);

const prefix = isolatedPrefix('mail_fair');
const CALLS = 16;
const PER_CALL = 50;
let sink: SmtpSink;
let gw: TestGateway;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink();
  // One batch per call of 50, so every call is a fan-out of its own at the front of its turn.
  gw = await startGateway({ QUEUE_PREFIX: prefix, MAIL_BATCH_SIZE: '50' });
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw?.close();
  await sink?.close();
});

async function teamWithEvent(): Promise<{ team: TestTeam; eventPath: string; invite: (emails: string[]) => Promise<void> }> {
  const team = await gw.newTeam({ limits: { mail_per_day: null, mail_per_month: null, mail_per_recipient_per_day: null } });
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Launch', date_start: '2031-03-01 10:00', date_end: '2031-03-01 11:00', timezone: 'UTC' })).body.data;
  const invite = async (emails: string[]) => {
    const res = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
    if (res.status !== 200) throw new Error(`invites: ${res.status} ${res.text.slice(0, 200)}`);
  };
  return { team, eventPath: `/api/calendars/${cal.public_id}/events/${evt.public_id}`, invite };
}

const fanOuts = async (invite: (emails: string[]) => Promise<void>, tag: string, calls: number) => {
  for (let c = 0; c < calls; c++) await invite(Array.from({ length: PER_CALL }, (_, i) => `${tag}-${c}-${i}@fair.test`));
};

/**
 * Sends everything queued (a worker started now), answers the recipients in the order they
 * arrived. `oneAtATime`: one job and one connection, so arrival is the order of service.
 */
async function drain(expected: number, oneAtATime = false): Promise<string[]> {
  const before = sink.received.length;
  const serial: Record<string, string> = oneAtATime ? { MAIL_CONCURRENCY: '1', MAIL_POOL_SIZE: '1' } : {};
  const worker = await startWorker<MailJob, MailOutcome>((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', ...serial });
  try {
    await waitFor(() => sink.received.length - before >= expected, { what: `${expected} messages`, timeoutMs: 150_000 });
  } finally {
    await worker.close();
  }
  return sink.received.slice(before).map((m) => m.to[0]);
}

it("puts one team's single invitation before most of another team's hundreds", async () => {
  const a = await teamWithEvent();
  const b = await teamWithEvent();
  await fanOuts(a.invite, 'a1', CALLS);
  await b.invite(['b1@fair.test']);
  const order = await drain(CALLS * PER_CALL + 1);
  const position = order.indexOf('b1@fair.test');
  // Before: behind every one of A's fan-outs (position 800). Now: in the first turn.
  expect(position).toBeGreaterThanOrEqual(0);
  expect(position).toBeLessThan(4 * PER_CALL);

  // A's mail has gone out: A starts again at the queue's present, not behind its own past.
  await fanOuts(b.invite, 'b2', CALLS / 2);
  await a.invite(['a2@fair.test']);
  const next = await drain((CALLS / 2) * PER_CALL + 1);
  const again = next.indexOf('a2@fair.test');
  expect(again).toBeGreaterThanOrEqual(0);
  expect(again).toBeLessThan(4 * PER_CALL);
});

it("serves another team's single invitation after one batch of a 200-invitee fan-out and its cancellation", async () => {
  const big = await teamWithEvent();
  const small = await teamWithEvent();
  const crowd = Array.from({ length: 200 }, (_, i) => `guest${i}@big.fair.test`);
  await big.invite(crowd);
  // No worker yet: the 200 invitations and then the 200 cancellations wait in the queue…
  expect((await big.team.api.delete(big.eventPath, { notify_invitees: true })).body.data.invitees_notified).toBe(200);
  // …and only then does the other team invite one person.
  await small.invite(['solo@small.fair.test']);
  expect(await queue.count()).toBe(9); // batches of 50: 4 + 4 + 1
  const order = await drain(401, true);
  // The big team's 8 batches hold its next 8 turns; the small team's one batch takes the
  // turn after the batch under way: one batch of invitations, not the 400 messages before it.
  expect(order.indexOf('solo@small.fair.test')).toBe(PER_CALL);
  expect(order.slice(0, PER_CALL).every((to) => to.endsWith('@big.fair.test'))).toBe(true);
  const subjects = sink.received.slice(-401, -401 + PER_CALL).map((m) => m.parsed.subject?.split(':')[0]);
  expect(subjects).toEqual(Array(PER_CALL).fill('Invitation'));
});
