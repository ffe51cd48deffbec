import { type Job, Queue, UnrecoverableError } from 'bullmq';
import pino from 'pino';
import { parseMailbox } from '../../shared/config/mailbox';
import { loadConfig } from '../../shared/config/config';
import type { Knex } from '../../shared/db/knex';
import type { MailJob } from '../../shared/queues/mail.job';
import { mailJobOf } from '../helpers/mail-job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { claimDeliveries } from '../../services/mail-worker/deliveries.repository';
import { type MailDeps, processMailJob } from '../../services/mail-worker/mail.processor';
import { smtpTransport } from '../../services/mail-worker/mail.transport';
import { deliveryMessageId } from '../../services/mail-worker/message.builder';
import { unlimited } from '../../services/mail-worker/send-rate';
import { SentRecorder } from '../../services/mail-worker/sent-recorder';
import { startGateway, testEnv, type TestGateway, type TestTeam } from '../helpers/gateway';
import { freePort } from '../helpers/processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * The processor called directly against Postgres and a real SMTP server (no worker): the
 * gateway queues the jobs, the test runs them itself and looks at the rows.
 */
const prefix = isolatedPrefix('mail_processor');
let sink: SmtpSink;
let gw: TestGateway;
let team: TestTeam;
let deps: MailDeps;
const logLines: string[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink({
    answer: ({ to }) => {
      if (to.some((r) => r.startsWith('later'))) return { code: 452, message: '4.2.2 Mailbox full' };
      if (to.some((r) => r.startsWith('never'))) return { code: 554, message: '5.7.1 Rejected' };
      return 'accept';
    },
  });
  gw = await startGateway({ QUEUE_PREFIX: prefix, MAIL_BATCH_SIZE: '3' });
  team = await gw.newTeam();
  const config = loadConfig(testEnv({ SMTP_URL: sink.url }));
  const mailbox = parseMailbox(config.mailFrom);
  if (!mailbox) throw new Error('MAIL_FROM');
  deps = { db: gw.db, clock: gw.clock, transport: smtpTransport(config), from: { header: config.mailFrom, mailbox }, recorder: new SentRecorder(gw.db, log), rate: unlimited, countDelivery: () => undefined };
});
afterAll(async () => {
  deps.transport.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

/** Invites these people to a new event; answers the payloads of the jobs queued (batches of 3). */
async function queuedInvitations(...emails: string[]): Promise<MailJob[]> {
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Sync', date_start: '2026-06-01 10:00', date_end: '2026-06-01 10:30', timezone: 'UTC' })).body.data;
  await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
  const ids = (await gw.db('deliveries').whereIn('email', emails).orderBy('id').pluck('id')) as number[];
  const jobs: MailJob[] = [];
  for (let i = 0; i < ids.length; i += 3) {
    const job = await mailJobOf(queue, ids[i]);
    if (!job) throw new Error('no job queued');
    jobs.push(job.data);
  }
  return jobs;
}

// The processor reads only data, attemptsMade and opts.attempts of the BullMQ job.
const asJob = (data: MailJob, attemptsMade = 0, attempts = 3) => ({ data, attemptsMade, opts: { attempts } }) as unknown as Job<MailJob>;
const delivery = (id: number) => gw.db('deliveries').first('status', 'attempts', 'error', 'message_id', 'claim_token', 'sent_at').where({ id });

/** Resolves once some session waits on a lock this transaction holds (the processor, here). */
async function blockedBy(trx: Knex.Transaction): Promise<void> {
  const { rows } = await trx.raw('SELECT pg_backend_pid() AS pid');
  await waitFor(async () => (await gw.db.raw('SELECT 1 FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))', [rows[0].pid])).rows.length > 0, {
    what: 'the processor to wait on the event lock',
  });
}

describe('processMailJob', () => {
  it('claims, sends and records a batch; a second run of the same job sends nothing', async () => {
    const emails = ['one@example.test', 'two@example.test', 'three@example.test', 'four@example.test'];
    const jobs = await queuedInvitations(...emails);
    expect(jobs.map((j) => j.messages.map((m) => m.to.email))).toEqual([emails.slice(0, 3), emails.slice(3)]);
    const [first] = jobs;
    expect(await processMailJob(asJob(first), deps, log)).toEqual({ sent: 3, skipped: 0, gone: 0 });
    for (const m of first.messages) {
      expect(await delivery(m.deliveryId)).toMatchObject({ status: 'sent', attempts: 1, error: null, claim_token: null, message_id: deliveryMessageId(first, m.deliveryId) });
      expect(sink.for(m.to.email).map((r) => r.parsed.messageId)).toEqual([deliveryMessageId(first, m.deliveryId)]);
    }
    expect(await processMailJob(asJob(first), deps, log)).toEqual({ sent: 0, skipped: 3, gone: 0 });
    for (const email of emails.slice(0, 3)) expect(sink.tries(email)).toBe(1);
    expect(sink.tries('four@example.test')).toBe(0);
  });

  it('sends again, with the same Message-ID, a message whose earlier attempt died before its record', async () => {
    const [job] = await queuedInvitations('resumed@example.test');
    const [m] = job.messages;
    // A worker claimed it and vanished (no outcome recorded).
    expect(await claimDeliveries(gw.db, [m], 'token-of-a-dead-worker')).toEqual(new Map([[m.deliveryId, { attempts: 1, interruptedClaim: null }]]));
    expect(await processMailJob(asJob(job), deps, log)).toMatchObject({ sent: 1 });
    expect(await delivery(m.deliveryId)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(logLines.some((l) => l.includes('an earlier attempt stopped mid-send') && l.includes(`"deliveryId":${m.deliveryId}`))).toBe(true);
    expect(sink.for('resumed@example.test').map((r) => r.parsed.messageId)).toEqual([deliveryMessageId(job, m.deliveryId)]);
  });

  it('waits for the transaction that queued the job, then sends', async () => {
    const [job] = await queuedInvitations('early@example.test');
    // Replay the gateway's order of events: the job exists, its row is not committed yet.
    const trx = await gw.db.transaction();
    await trx.raw('SELECT 1 FROM events WHERE id = ? FOR UPDATE', [job.eventId]);
    await trx('deliveries').where({ id: job.messages[0].deliveryId }).delete();
    const [row] = await trx('deliveries')
      .insert({ team_id: team.teamId, event_id: job.eventId, email: 'early@example.test', kind: 'invitation', sequence: 5 })
      .returning(['id', 'key']);
    const outcome = processMailJob(asJob({ ...job, messages: [{ ...job.messages[0], deliveryId: row.id, key: row.key }] }), deps, log);
    await blockedBy(trx);
    await trx.commit();
    expect(await outcome).toEqual({ sent: 1, skipped: 0, gone: 0 });
    expect(sink.for('early@example.test')).toHaveLength(1);
  });

  it('sends nothing for a job whose transaction rolled back', async () => {
    const [job] = await queuedInvitations('rolled-anchor@example.test');
    const trx = await gw.db.transaction();
    await trx.raw('SELECT 1 FROM events WHERE id = ? FOR UPDATE', [job.eventId]);
    const [row] = await trx('deliveries')
      .insert({ team_id: team.teamId, event_id: job.eventId, email: 'rolled@example.test', kind: 'update', sequence: 7 })
      .returning(['id', 'key']);
    const outcome = processMailJob(asJob({ ...job, kind: 'update', messages: [{ deliveryId: row.id, key: row.key, to: { email: 'rolled@example.test', name: null } }] }), deps, log);
    await blockedBy(trx);
    await trx.rollback();
    expect(await outcome).toEqual({ sent: 0, skipped: 0, gone: 1 });
    expect(sink.tries('rolled@example.test')).toBe(0);
  });

  it('keeps a temporary failure for the next attempt, fails it on the last, and sends the rest of the batch', async () => {
    const [job] = await queuedInvitations('later@example.test', 'fine@example.test');
    const [later, fine] = job.messages;
    const first = await processMailJob(asJob(job, 0, 2), deps, log).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Error);
    expect(first).not.toBeInstanceOf(UnrecoverableError);
    expect((first as Error).message).toBe('1 of 2 messages will be retried: 452 4.2.2 Mailbox full');
    expect(await delivery(later.deliveryId)).toMatchObject({ status: 'queued', attempts: 1, claim_token: null, error: '452 4.2.2 Mailbox full' });
    expect(await delivery(fine.deliveryId)).toMatchObject({ status: 'sent', attempts: 1 });

    // The retry sends only what is left; on the last attempt the failure is final.
    const last = await processMailJob(asJob(job, 1, 2), deps, log).catch((e: unknown) => e);
    expect(last).toBeInstanceOf(UnrecoverableError);
    expect(await delivery(later.deliveryId)).toMatchObject({ status: 'failed', attempts: 2, error: '452 4.2.2 Mailbox full', sent_at: null });
    expect(await processMailJob(asJob(job, 2, 3), deps, log)).toEqual({ sent: 0, skipped: 2, gone: 0 });
    expect(sink.tries('later@example.test')).toBe(2);
    expect(sink.tries('fine@example.test')).toBe(1);
  });

  it('fails a 5xx at once and for good, without holding back the others', async () => {
    const [job] = await queuedInvitations('never@example.test', 'other@example.test');
    const err = await processMailJob(asJob(job, 0, 5), deps, log).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toBe('1 of 2 messages failed: 554 5.7.1 Rejected');
    expect(await delivery(job.messages[0].deliveryId)).toMatchObject({ status: 'failed', attempts: 1, error: '554 5.7.1 Rejected' });
    expect(await delivery(job.messages[1].deliveryId)).toMatchObject({ status: 'sent' });
  });

  it('treats an SMTP server that cannot be reached as a temporary failure', async () => {
    const [job] = await queuedInvitations('unreachable@example.test');
    const port = await freePort();
    const down = smtpTransport(loadConfig(testEnv({ SMTP_URL: `smtp://127.0.0.1:${port}` })));
    try {
      const err = await processMailJob(asJob(job), { ...deps, transport: down }, log).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(UnrecoverableError);
      expect(await delivery(job.messages[0].deliveryId)).toMatchObject({ status: 'queued', attempts: 1, claim_token: null, error: expect.stringContaining('ECONNREFUSED') });
    } finally {
      down.close();
    }
  });
});
