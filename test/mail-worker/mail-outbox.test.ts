import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { simpleParser } from 'mailparser';
import { icsUid } from '../../shared/calendar/ics';
import type { MailJob } from '../../shared/queues/mail.job';
import { mailJobOf, reread } from '../helpers/mail-job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';
import { isolatedPrefix } from '../helpers/service-processes';

// No SMTP_URL: the worker writes every message as an .eml file to OUTBOX_DIR.
const prefix = isolatedPrefix('mail_outbox');
const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-test-'));
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  worker = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, OUTBOX_DIR: outbox });
});
afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  fs.rmSync(outbox, { recursive: true, force: true });
});

const emlFiles = () => fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'));

describe('the outbox (no SMTP_URL)', () => {
  it('writes each message as a whole .eml file, once, that parses as the invitation', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'Asia/Tokyo' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Kickoff', date_start: '2026-05-01 09:30', date_end: '2026-05-01 10:30', timezone: 'Asia/Tokyo' })).body.data;
    await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'kai@example.test', name: 'Kai' }] });

    const [file] = await waitFor(() => emlFiles().length === 1 && emlFiles(), { what: 'the .eml file' });
    // Named by the row's id and random key: another database's row of the same id gets another file.
    expect(file).toMatch(/^d\d+-[0-9a-f-]{36}-invitation\.eml$/);
    const raw = fs.readFileSync(path.join(outbox, file));
    expect(raw.toString('utf8')).not.toMatch(/[^\r]\n/); // CRLF line ends throughout, as RFC 5322 wants
    const mail = await simpleParser(raw);
    expect(mail.subject).toBe('Invitation: Kickoff @ Fri May 1, 2026 9:30 AM - 10:30 AM (JST)');
    expect(mail.to).toMatchObject({ value: [{ address: 'kai@example.test', name: 'Kai' }] });
    const ics = mail.attachments.find((a) => a.contentType === 'text/calendar')?.content.toString('utf8') ?? '';
    expect(ics).toContain('METHOD:REQUEST');
    expect(ics).toContain(`UID:${icsUid(evt.uid, new URL(gw.baseUrl).host)}`);
    expect(ics).toContain('DTSTART;TZID=Asia/Tokyo:20260501T093000');

    // Recorded like an SMTP delivery; running the job again rewrites nothing new.
    const row = await waitFor(async () => {
      const r = await gw.db('deliveries').first('id', 'status', 'message_id').where({ email: 'kai@example.test' });
      return r?.status === 'sent' && r;
    }, { what: 'the delivery recorded sent' });
    expect(row.message_id).toBe(mail.messageId);
    const job = await mailJobOf(queue, row.id);
    await waitFor(async () => (await job?.getState()) === 'completed', { what: 'the job to complete' });
    await job?.retry('completed');
    await waitFor(async () => (await reread(queue, job))?.returnvalue?.skipped === 1 || undefined, { what: 'the re-run' });
    expect(emlFiles()).toEqual([file]);
    expect(fs.readdirSync(outbox).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});
