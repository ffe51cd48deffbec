import { type Job, Queue, UnrecoverableError } from 'bullmq';
import pino from 'pino';
import { parseMailbox } from '../../shared/config/mailbox';
import { loadConfig } from '../../shared/config/config';
import type { Knex } from '../../shared/db/knex';
import type { MailJob } from '../../shared/queues/mail-jobs';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { claimDelivery } from '../../services/mail-worker/deliveries.repository';
import { type MailDeps, processMailJob } from '../../services/mail-worker/mail.processor';
import { smtpTransport } from '../../services/mail-worker/mail.transport';
import { deliveryMessageId } from '../../services/mail-worker/message.builder';
import { startGateway, testEnv, type TestGateway, type TestTeam } from '../helpers/gateway';
import { freePort } from '../helpers/processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';

/**
 * The processor called directly against Postgres and a real SMTP server (no worker): the
 * gateway queues the jobs, the test runs them one by one and looks at the rows.
 */
const prefix = `{mail-processor-${process.pid}}`;
let sink: SmtpSink;
let gw: TestGateway;
let team: TestTeam;
let deps: MailDeps;
const logLines: string[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink({ answer: ({ to }) => (to.some((r) => r.startsWith('later')) ? { code: 452, message: '4.2.2 Mailbox full' } : 'accept') });
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  team = await gw.newTeam();
  const config = loadConfig(testEnv({ SMTP_URL: sink.url }));
  const mailbox = parseMailbox(config.mailFrom);
  if (!mailbox) throw new Error('MAIL_FROM');
  deps = { db: gw.db, clock: gw.clock, transport: smtpTransport(config), from: { header: config.mailFrom, mailbox } };
});
afterAll(async () => {
  deps.transport.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

/** Invites one person to a new event; answers the queued job's payload and the event. */
async function queuedInvitation(email: string) {
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Sync', date_start: '2026-06-01 10:00', date_end: '2026-06-01 10:30', timezone: 'UTC' })).body.data;
  await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email }] });
  const row = await gw.db('deliveries').first('id').where({ email });
  const job = await queue.getJob(`mail-${row.id}`);
  if (!job) throw new Error('no job queued');
  return { data: job.data, eventUid: evt.uid as string };
}

/** Resolves once some session waits on a lock this transaction holds (the processor, here). */
async function blockedBy(trx: Knex.Transaction): Promise<void> {
  const { rows } = await trx.raw('SELECT pg_backend_pid() AS pid');
  await waitFor(async () => (await gw.db.raw('SELECT 1 FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))', [rows[0].pid])).rows.length > 0, {
    what: 'the processor to wait on the event lock',
  });
}

// The processor reads only data, attemptsMade and opts.attempts of the BullMQ job.
const asJob = (data: MailJob, attemptsMade = 0, attempts = 3) => ({ data, attemptsMade, opts: { attempts } }) as unknown as Job<MailJob>;
const delivery = (id: number) => gw.db('deliveries').first('status', 'attempts', 'error', 'message_id', 'claim_token', 'sent_at').where({ id });

describe('processMailJob', () => {
  it('claims, sends and records; a second run of the same job sends nothing', async () => {
    const { data } = await queuedInvitation('one@example.test');
    expect(await processMailJob(asJob(data), deps, log)).toBe('sent');
    expect(await delivery(data.deliveryId)).toMatchObject({ status: 'sent', attempts: 1, error: null, claim_token: null, message_id: deliveryMessageId(data) });
    expect(await processMailJob(asJob(data), deps, log)).toBe('already-sent');
    expect(sink.for('one@example.test')).toHaveLength(1);
    expect(sink.for('one@example.test')[0].parsed.messageId).toBe(deliveryMessageId(data));
  });

  it('sends again, with the same Message-ID, a message whose earlier attempt died before its record', async () => {
    const { data } = await queuedInvitation('resumed@example.test');
    // A worker claimed it and vanished (no outcome recorded).
    expect(await claimDelivery(gw.db, data.deliveryId, 'token-of-a-dead-worker')).toEqual({ attempts: 1, interruptedClaim: null });
    expect(await processMailJob(asJob(data), deps, log)).toBe('sent');
    expect(await delivery(data.deliveryId)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(logLines.some((l) => l.includes('an earlier attempt stopped mid-send') && l.includes(`"deliveryId":${data.deliveryId}`))).toBe(true);
    expect(sink.for('resumed@example.test').map((m) => m.parsed.messageId)).toEqual([deliveryMessageId(data)]);
  });

  it('waits for the transaction that queued the job, then sends', async () => {
    const { data } = await queuedInvitation('early@example.test');
    // Replay the gateway's order of events: the job exists, its row is not committed yet.
    const trx = await gw.db.transaction();
    await trx.raw('SELECT 1 FROM events WHERE id = ? FOR UPDATE', [data.eventId]);
    await trx('deliveries').where({ id: data.deliveryId }).delete();
    const [row] = await trx('deliveries')
      .insert({ team_id: team.teamId, event_id: data.eventId, email: 'early@example.test', kind: 'invitation', sequence: 5 })
      .returning('id');
    const early = { ...data, deliveryId: row.id };
    const outcome = processMailJob(asJob(early), deps, log);
    await blockedBy(trx);
    await trx.commit();
    expect(await outcome).toBe('sent');
    expect(sink.for('early@example.test')).toHaveLength(1);
  });

  it('sends nothing for a job whose transaction rolled back', async () => {
    const { data } = await queuedInvitation('rolled@example.test');
    const trx = await gw.db.transaction();
    await trx.raw('SELECT 1 FROM events WHERE id = ? FOR UPDATE', [data.eventId]);
    const [row] = await trx('deliveries')
      .insert({ team_id: team.teamId, event_id: data.eventId, email: 'rolled@example.test', kind: 'update', sequence: 7 })
      .returning('id');
    const outcome = processMailJob(asJob({ ...data, kind: 'update', deliveryId: row.id }), deps, log);
    await blockedBy(trx);
    await trx.rollback();
    expect(await outcome).toBe('gone');
    expect(sink.tries('rolled@example.test')).toBe(0);
  });

  it('keeps a temporary failure queued for the next attempt, and fails it on the last', async () => {
    const { data } = await queuedInvitation('later@example.test');
    const first = await processMailJob(asJob(data, 0, 2), deps, log).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Error);
    expect(first).not.toBeInstanceOf(UnrecoverableError);
    expect(await delivery(data.deliveryId)).toMatchObject({ status: 'queued', attempts: 1, claim_token: null, error: '452 4.2.2 Mailbox full' });
    await expect(processMailJob(asJob(data, 1, 2), deps, log)).rejects.toThrow(/Mailbox full/);
    expect(await delivery(data.deliveryId)).toMatchObject({ status: 'failed', attempts: 2, error: '452 4.2.2 Mailbox full', sent_at: null });
    expect(await processMailJob(asJob(data, 2, 3), deps, log)).toBe('already-failed');
    expect(sink.tries('later@example.test')).toBe(2);
  });

  it('treats an SMTP server that cannot be reached as a temporary failure', async () => {
    const { data } = await queuedInvitation('unreachable@example.test');
    const port = await freePort();
    const down = smtpTransport(loadConfig(testEnv({ SMTP_URL: `smtp://127.0.0.1:${port}` })));
    try {
      const err = await processMailJob(asJob(data), { ...deps, transport: down }, log).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(UnrecoverableError);
      expect(await delivery(data.deliveryId)).toMatchObject({ status: 'queued', attempts: 1, claim_token: null, error: expect.stringContaining('ECONNREFUSED') });
    } finally {
      down.close();
    }
  });
});
