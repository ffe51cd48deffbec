import { Queue } from 'bullmq';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import type { MailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * A free account is not a way to send spam from our address: each plan bounds the email a
 * team can have sent in a day and a month, and how often one address is mailed in a day,
 * whatever the API calls. Checked with real mail through an SMTP sink: what arrives is what
 * the quotas allow, a call over the quota is refused whole (429 with the figures, nothing
 * stored or sent), and a visitor's RSVP stands even when its confirmation is skipped.
 */
jest.setTimeout(60_000);

const prefix = isolatedPrefix('mail_quota');
let sink: SmtpSink;
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  worker = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0' });
});
afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

async function teamWith(limits: { mail_per_day?: number | null; mail_per_recipient_per_day?: number | null }) {
  const team = await gw.newTeam({ limits: { mail_per_day: null, mail_per_month: null, mail_per_recipient_per_day: null, ...limits } });
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const event = async (title: string, extra: Record<string, unknown> = {}) =>
    (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: '2031-03-01 10:00', date_end: '2031-03-01 11:00', timezone: 'UTC', ...extra })).body.data;
  return { team, cal, event };
}

const receivedBy = (address: string) => sink.received.filter((m) => m.to.includes(address)).length;

it('refuses a call that would pass the daily quota, whole: 429 with the figures, nothing stored or sent', async () => {
  const { team, cal, event } = await teamWith({ mail_per_day: 5 });
  const evt = await event('Quota party');
  const path = `/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`;
  const first = await team.api.post(path, { invitees: ['q1', 'q2', 'q3'].map((n) => ({ email: `${n}@quota.test` })) });
  expect(first.status).toBe(200);
  const over = await team.api.post(path, { invitees: ['q4', 'q5', 'q6'].map((n) => ({ email: `${n}@quota.test` })) });
  expect(over.status).toBe(429);
  expect(over.body).toMatchObject({ quota: 'daily', limit: 5, used: 3, remaining: 2, requested: 3, resets_at: expect.stringMatching(/T00:00:00\.000Z$/) });
  expect(over.body.message).toMatch(/daily email quota \(5 messages\)/);
  expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  // Nothing of the refused call was stored: the invitees list holds the first three only.
  expect((await team.api.get(path)).body.data.map((i: { email: string }) => i.email).sort()).toEqual(['q1@quota.test', 'q2@quota.test', 'q3@quota.test']);
  await waitFor(() => receivedBy('q3@quota.test') === 1, { what: 'the first three invitations' });
  expect(['q4', 'q5', 'q6'].map((n) => receivedBy(`${n}@quota.test`))).toEqual([0, 0, 0]);
  const account = (await team.api.get('/api/account')).body.data.email;
  expect(account).toEqual({ sent_today: 3, per_day: 5, sent_this_month: 3, per_month: null, per_recipient_per_day: null });
  // Two more fit exactly.
  expect((await team.api.post(path, { invitees: [{ email: 'q7@quota.test' }, { email: 'q8@quota.test' }] })).status).toBe(200);
});

it('mails one address at most its daily number of times, however often it is added and removed', async () => {
  const { team, cal, event } = await teamWith({ mail_per_recipient_per_day: 2 });
  const evt = await event('Churn');
  const path = `/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`;
  for (let i = 0; i < 3; i++) {
    const added = await team.api.post(path, { invitees: [{ email: 'churn@quota.test' }] });
    expect(added.status).toBe(200);
    const removed = await team.api.delete(`${path}/${added.body.data[0].id}`);
    expect(removed.status).toBe(200);
  }
  // Every row settled (sent, or skipped from the start): nothing more can arrive.
  const settled = async () => {
    const rows = await gw.db('deliveries').where({ team_id: team.teamId }).orderBy('id').select('status', 'error');
    return rows.every((r) => r.status !== 'queued') && receivedBy('churn@quota.test') === rows.filter((r) => r.status === 'sent').length && rows;
  };
  const rows = await waitFor(settled, { what: 'every message sent or skipped' });
  expect(receivedBy('churn@quota.test')).toBe(2);
  expect(rows.filter((r) => r.status === 'skipped')).toHaveLength(4);
  expect(rows.find((r) => r.status === 'skipped')?.error).toBe('recipient daily limit reached');
});

it('refuses a call that would pass the monthly quota, saying so', async () => {
  const { team, cal, event } = await teamWith({});
  await gw.db('plans').where({ id: (await gw.db('teams').where({ id: team.teamId }).first('plan_id')).plan_id }).update({ mail_per_month: 2 });
  const evt = await event('Monthly');
  const over = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: ['m1', 'm2', 'm3'].map((n) => ({ email: `${n}@quota.test` })) });
  expect([over.status, over.body.quota, over.body.limit, over.body.resets_at]).toEqual([429, 'monthly', 2, expect.stringMatching(/-01T00:00:00\.000Z$/)]);
  expect(await gw.db('deliveries').where({ team_id: team.teamId }).count<Array<{ count: number }>>('* as count')).toEqual([{ count: 0 }]);
});

it("takes a visitor's RSVP past the quota and skips only its confirmation", async () => {
  const { team, event } = await teamWith({ mail_per_day: 0 });
  const evt = await event('Open house', { has_rsvp: true });
  const res = await gw.anon.post(`/e/${evt.uid}/rsvp`, { name: 'Ann', email: 'ann@quota.test', answer: 'yes' });
  expect(res.status).toBe(202);
  const answers = await gw.db('rsvps').where({ event_id: (await gw.db('events').where({ uid: evt.uid }).first('id')).id }).select('email');
  expect(answers).toEqual([{ email: 'ann@quota.test' }]);
  // One message, skipped: no answer link is tried in its place (it would be skipped alike).
  const deliveries = await gw.db('deliveries').where({ team_id: team.teamId }).select('kind', 'status', 'error');
  expect(deliveries).toEqual([{ kind: 'rsvp_yes', status: 'skipped', error: 'daily email quota reached' }]);
});
