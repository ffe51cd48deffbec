import { Queue } from 'bullmq';
import ical from 'node-ical';
import nodemailer from 'nodemailer';
import { loadConfig } from '../../shared/config/config';
import { createDb } from '../../shared/db/knex';
import { createLogger } from '../../shared/logging/logger';
import { type InboundReplyJob, inboundReplyJob } from '../../shared/queues/inbound-reply.job';
import type { MailJob } from '../../shared/queues/mail.job';
import { Producer } from '../../shared/queues/queues';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { inboundWorker, type InboundOutcome } from '../../services/inbound-mail/inbound.worker';
import { type InboundSmtp, startInboundSmtp } from '../../services/inbound-mail/smtp.server';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { startGateway, type TestGateway, type TestTeam, testEnv } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { deliverTo, replyFixture } from '../helpers/inbound';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * Invitation → a calendar app's answer → recorded. The gateway queues invitations naming
 * each invitee's reply address; the mail worker sends them to a real SMTP server; the
 * answers, in the shapes real clients send (test/fixtures/itip-replies), go through a real
 * SMTP client to the inbound-mail server, whose worker records them; the API shows them.
 */
const prefix = isolatedPrefix('inbound');
const DOMAIN = 'replies.example.test';
const env = { QUEUE_PREFIX: prefix, REPLY_DOMAIN: DOMAIN, INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1', INBOUND_MAX_BYTES: '60000' };

let sink: SmtpSink;
let gw: TestGateway;
let mail: TestWorker<MailJob, MailOutcome>;
let inbound: TestWorker<InboundReplyJob, InboundOutcome>;
let smtp: InboundSmtp;
let producer: Producer<InboundReplyJob>;
const producerRedis = createRedis(process.env.TEST_REDIS_URL as string, 'client');
const config = loadConfig(testEnv(env));
const db = createDb(config.databaseUrl, { poolMax: 3 });
let team: TestTeam;
let cal: { public_id: string };

beforeAll(async () => {
  sink = await startSmtpSink();
  gw = await startGateway(env);
  mail = await startWorker((ctx) => mailWorker(ctx), { ...env, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0' });
  inbound = await startWorker(() => inboundWorker(), env);
  producer = new Producer(inboundReplyJob, producerRedis, prefix, createLogger('test', 'silent'));
  smtp = await startInboundSmtp({ config, db, producer, logger: createLogger('inbound-test', 'silent') });
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Team', timezone: 'Europe/Berlin', organizer_name: 'Dana Organizer', organizer_email: 'dana@example.test' })).body.data;
});
afterAll(async () => {
  await smtp.close();
  await producer.close();
  await inbound.close();
  await mail.close();
  for (const name of ['emails', 'inbound-replies']) {
    const q = new Queue(name, { connection: producerRedis, prefix });
    await q.obliterate({ force: true });
    await q.close();
  }
  await closeRedis(producerRedis);
  await db.destroy();
  await gw.close();
  await sink.close();
});

let n = 0;
const unique = (name: string) => `${name}-${process.env.TEST_RUN_ID ?? 'x'}-${++n}@guests.example.test`;

interface Invited {
  evt: { public_id: string; uid: string };
  email: string;
  replyAddress: string;
  organizerName: string;
}

/** An event with one invitee, and the invitation as their calendar app reads it (node-ical). */
async function invite(opts: { email?: string; name?: string; hasRsvp?: boolean } = {}): Promise<Invited> {
  const email = opts.email ?? unique('guest');
  const evt = (
    await team.api.post(`/api/calendars/${cal.public_id}/events`, {
      title: 'Quarterly planning',
      date_start: '2027-03-15 10:00',
      date_end: '2027-03-15 11:30',
      timezone: 'Europe/Berlin',
      has_rsvp: opts.hasRsvp ?? false,
    })
  ).body.data;
  expect((await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email, name: opts.name ?? 'Robin Guest' }] })).status).toBe(200);
  const message = await waitFor(() => sink.for(email)[0], { what: `the invitation to ${email}` });
  const vevent = Object.values(ical.sync.parseICS(message.calendar)).find((c) => c?.type === 'VEVENT') as ical.VEvent;
  const organizer = vevent.organizer as unknown as { params: { CN: string }; val: string };
  const replyAddress = organizer.val.replace(/^mailto:/i, '');
  // Bounces come back to the same address: it is the envelope sender.
  expect(message.from).toBe(replyAddress);
  return { evt, email, replyAddress, organizerName: organizer.params.CN };
}

/** A fixture with its placeholders filled (see test/helpers/inbound.ts). */
const fixture = (name: string, values: Record<string, string>) => replyFixture(name, values);

/** Sends a message to the inbound server as a mail server would. */
const deliver = (to: string, raw: string, from?: string) => deliverTo(smtp.port, to, raw, from);

/** What the worker made of the message the server answered with this 250 (`Queued as <job id>`). */
async function handled(response: string): Promise<unknown> {
  const jobId = response.slice(response.indexOf('Queued as ') + 'Queued as '.length).trim();
  const queue = new Queue('inbound-replies', { connection: producerRedis, prefix });
  try {
    return await waitFor(async () => (await queue.getJob(jobId))?.returnvalue ?? undefined, { what: `inbound job ${jobId}` });
  } finally {
    await queue.close();
  }
}

const inviteesOf = async (evt: { public_id: string }) => (await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`)).body.data as Array<Record<string, unknown>>;
const responseOf = (evt: { public_id: string }, want: (inv: Record<string, unknown>) => boolean) =>
  waitFor(async () => (await inviteesOf(evt)).find(want), { what: 'the recorded response' });

describe('invitations with REPLY_DOMAIN', () => {
  it("name the invitee's own reply address as ORGANIZER, under the organizer's name", async () => {
    const a = await invite();
    const b = await invite();
    expect(a.organizerName).toBe('Dana Organizer');
    expect(a.replyAddress).toMatch(new RegExp(`^reply\\+[0-9a-z]+-[0-9a-f]{32}@${DOMAIN.replace(/\./g, '\\.')}$`));
    expect(b.replyAddress).not.toBe(a.replyAddress);
  });
});

describe('answers from calendar apps', () => {
  const cases: Array<{ file: string; values?: Record<string, string>; expected: string; what: string }> = [
    { what: 'Thunderbird accepts', file: 'thunderbird-accept.eml', expected: 'accepted' },
    { what: 'Thunderbird declines', file: 'thunderbird-decline.eml', expected: 'declined' },
    { what: 'Thunderbird says maybe', file: 'thunderbird-tentative.eml', expected: 'tentative' },
    { what: 'Apple Calendar accepts (METHOD only in the body, no method= parameter)', file: 'apple-accept.eml', expected: 'accepted' },
    { what: 'Google Calendar accepts', file: 'gmail-reply.eml', values: { PARTSTAT: 'ACCEPTED' }, expected: 'accepted' },
    { what: 'Outlook accepts (base64, no ORGANIZER line)', file: 'outlook-reply.eml', values: { PARTSTAT: 'ACCEPTED' }, expected: 'accepted' },
    { what: 'Outlook declines', file: 'outlook-reply.eml', values: { PARTSTAT: 'DECLINED' }, expected: 'declined' },
    { what: 'a reply with METHOD only in the Content-Type', file: 'method-in-content-type-only.eml', expected: 'accepted' },
    {
      what: "a delegation: the delegate's answer stands for the invitee",
      file: 'delegated-or-renamed.eml',
      values: { DELEGATE_EMAIL: 'deputy@guests.example.test', DELEGATE_NAME: 'Deputy', DELEGATE_PARTSTAT: 'ACCEPTED' },
      expected: 'accepted',
    },
  ];
  it.each(cases)('$what', async ({ file, values, expected }) => {
    const inv = await invite();
    const raw = fixture(file, { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: inv.email, ATTENDEE_NAME: 'Robin Guest', UID: `evt_${inv.evt.uid}@${new URL(gw.baseUrl).host}`, SEQUENCE: '0', ...values });
    const answer = await deliver(inv.replyAddress, raw, inv.email);
    expect(answer).toMatchObject({ ok: true, response: expect.stringMatching(/^250 /) });
    const recorded = await responseOf(inv.evt, (i) => i.email === inv.email && i.response !== null);
    expect(recorded).toMatchObject({ response: expected, response_stale: false, responded_at: expect.any(String) });
  });

  it('takes an answer sent from another of the person\'s addresses, or under another name, as theirs', async () => {
    const inv = await invite({ name: 'Robin Guest' });
    const raw = fixture('thunderbird-accept.eml', { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: 'robin.private@elsewhere.example.test', ATTENDEE_NAME: 'R. G.', UID: `evt_${inv.evt.uid}@host`, SEQUENCE: '0' });
    expect((await deliver(inv.replyAddress, raw)).ok).toBe(true);
    expect(await responseOf(inv.evt, (i) => i.response !== null)).toMatchObject({ email: inv.email, response: 'accepted' });
  });

  it('marks an answer to an older version stale, and never lets an older answer replace a newer one', async () => {
    const inv = await invite();
    const values = { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: inv.email, ATTENDEE_NAME: 'Robin Guest', UID: `evt_${inv.evt.uid}@h` };
    // The event changes (SEQUENCE 1) before the answer to the first invitation arrives.
    const moved = { title: 'Quarterly planning (room 4)', date_start: '2027-03-15 10:00', date_end: '2027-03-15 11:30', timezone: 'Europe/Berlin', send_invite_updates: true };
    expect((await team.api.put(`/api/calendars/${cal.public_id}/events/${inv.evt.public_id}`, moved)).status).toBe(200);
    await waitFor(() => sink.for(inv.email).length >= 2 || undefined, { what: 'the update' });
    expect((await deliver(inv.replyAddress, fixture('thunderbird-accept.eml', { ...values, SEQUENCE: '0' }))).ok).toBe(true);
    expect(await responseOf(inv.evt, (i) => i.response !== null)).toMatchObject({ response: 'accepted', response_stale: true });
    // The answer to the update: current.
    expect((await deliver(inv.replyAddress, fixture('thunderbird-decline.eml', { ...values, SEQUENCE: '1' }))).ok).toBe(true);
    expect(await responseOf(inv.evt, (i) => i.response === 'declined')).toMatchObject({ response_stale: false });
    // A late copy of the first answer changes nothing; nor does the same answer sent twice.
    const late = await deliver(inv.replyAddress, fixture('thunderbird-accept.eml', { ...values, SEQUENCE: '0' }));
    expect(late.ok).toBe(true);
    expect(await handled(late.response)).toEqual({ ignored: 'older_than_recorded' });
    const again = await deliver(inv.replyAddress, fixture('thunderbird-decline.eml', { ...values, SEQUENCE: '1' }));
    expect(await handled(again.response)).toEqual({ ignored: 'same_as_recorded' });
    expect((await inviteesOf(inv.evt))[0]).toMatchObject({ response: 'declined', response_stale: false });
    // A later update makes the answer stale until the person answers it.
    expect((await team.api.put(`/api/calendars/${cal.public_id}/events/${inv.evt.public_id}`, { ...moved, title: 'Quarterly planning (room 5)' })).status).toBe(200);
    await waitFor(() => sink.for(inv.email).length >= 3 || undefined, { what: 'the second update' });
    expect((await inviteesOf(inv.evt))[0]).toMatchObject({ response: 'declined', response_stale: true });
  });
});

describe('what the inbound server refuses', () => {
  it('refuses recipients it did not issue at RCPT: unknown, forged, or of a removed invitee', async () => {
    const inv = await invite();
    const raw = fixture('thunderbird-accept.eml', { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: inv.email, ATTENDEE_NAME: 'R', UID: `evt_${inv.evt.uid}@h`, SEQUENCE: '0' });
    const forged = inv.replyAddress.replace(/-([0-9a-f])/, (_m, c: string) => `-${c === '0' ? '1' : '0'}`);
    for (const to of [`someone@${DOMAIN}`, `reply+1-${'0'.repeat(32)}@${DOMAIN}`, forged, inv.replyAddress.replace(DOMAIN, 'other.example.test')]) {
      expect(await deliver(to, raw)).toMatchObject({ ok: false, code: 550 });
    }
    const [invitee] = await inviteesOf(inv.evt);
    expect((await team.api.delete(`/api/calendars/${cal.public_id}/events/${inv.evt.public_id}/invites/${String(invitee.id)}`)).status).toBe(200);
    expect(await deliver(inv.replyAddress, raw)).toMatchObject({ ok: false, code: 550 });
  });

  it('refuses a message without a calendar part, and one over INBOUND_MAX_BYTES', async () => {
    const inv = await invite();
    const plain = `From: ${inv.email}\r\nTo: ${inv.replyAddress}\r\nSubject: Re: Quarterly planning\r\n\r\nSee you there!\r\n`;
    const refused = await deliver(inv.replyAddress, plain);
    expect(refused).toMatchObject({ ok: false, code: 550 });
    expect(refused.response).toContain('calendar');
    const big = `${plain}${'x'.repeat(70_000)}\r\n`;
    expect(await deliver(inv.replyAddress, big)).toMatchObject({ ok: false, code: 552 });
    expect((await inviteesOf(inv.evt))[0]).toMatchObject({ response: null });
  });

  it('answers 451 (try later), recording nothing, while Redis is away', async () => {
    const inv = await invite();
    const raw = fixture('thunderbird-accept.eml', { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: inv.email, ATTENDEE_NAME: 'R', UID: `evt_${inv.evt.uid}@h`, SEQUENCE: '0' });
    const away = createRedis(process.env.TEST_REDIS_URL as string, 'client');
    away.on('error', () => undefined);
    const offline = new Producer(inboundReplyJob, away, prefix, createLogger('test', 'silent'));
    await offline.queue.waitUntilReady();
    away.disconnect();
    const second = await startInboundSmtp({ config, db, producer: offline, logger: createLogger('inbound-test', 'silent') });
    try {
      const client = nodemailer.createTransport({ host: '127.0.0.1', port: second.port, secure: false, ignoreTLS: true });
      const err = await client.sendMail({ envelope: { from: inv.email, to: inv.replyAddress }, raw }).then(
        () => null,
        (e: { responseCode?: number }) => e,
      );
      client.close();
      expect(err?.responseCode).toBe(451);
    } finally {
      await second.close();
      await offline.close().catch(() => undefined);
    }
    expect((await inviteesOf(inv.evt))[0]).toMatchObject({ response: null });
  });
});

describe('bounces', () => {
  it.each([
    ['a Postfix report', 'bounce-dsn.eml'],
    // It returns the invitation itself, with its METHOD:REQUEST calendar part: a bounce, not an answer.
    ['a report that returns the invitation (Symantec Mail Security)', 'bounce-dsn-invitation.eml'],
  ])("mark the invitee's message failed with the reason, and stop the team's mail to that address: %s", async (_kind, file) => {
    const inv = await invite();
    await waitFor(async () => ((await inviteesOf(inv.evt))[0].last_delivery as { status: string }).status === 'sent' || undefined, { what: 'the invitation sent' });
    const raw = fixture(file, { REPLY_ADDRESS: inv.replyAddress, ATTENDEE_EMAIL: inv.email, ATTENDEE_NAME: 'Robin Guest', UID: `evt_${inv.evt.uid}@h`, SEQUENCE: '0' });
    expect((await deliver(inv.replyAddress, raw, '')).ok).toBe(true);
    const failed = await waitFor(async () => {
      const [i] = await inviteesOf(inv.evt);
      return (i.last_delivery as { status: string }).status === 'failed' ? i : undefined;
    });
    expect(failed.last_delivery).toMatchObject({ kind: 'invitation', status: 'failed', error: expect.stringContaining('5.1.1') });
    const suppressed = await team.api.get(`/api/mail-suppressions?email=${encodeURIComponent(inv.email)}`);
    expect(suppressed.status).toBe(200);
    expect(JSON.stringify(suppressed.body)).toContain('5.1.1');
    expect(failed.response).toBeNull();
  });
});
