import { Queue } from 'bullmq';
import type { MailJob } from '../../shared/queues/mail.job';
import type { ReminderJob } from '../../shared/queues/reminder.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { startReminderSweeper } from '../../services/mail-worker/reminders.sweep';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, isolatedDatabase, isolatedPrefix, spawnWorker } from '../helpers/service-processes';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * Email reminders, end to end: events made and changed through the API, the mail worker's
 * sweep run at chosen times (the gateway's and the worker's clocks set, nothing waits on
 * the wall clock), the messages read back from a real SMTP server on loopback.
 *
 * A sweep reads every due event of its database, whichever team's: in the run's shared
 * database it would also send (or pass over) other files' events due before its clock, and
 * a batch of theirs could come before this file's. The file has a database of its own.
 */
jest.setTimeout(60_000);

const prefix = isolatedPrefix('reminders');
let sink: SmtpSink;
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
let sweeper: ReturnType<typeof startReminderSweeper>;
let team: TestTeam;
let cal: { public_id: string };
let database: Awaited<ReturnType<typeof isolatedDatabase>>;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });
const reminderQueue = new Queue<ReminderJob>('reminders', { connection: queueRedis, prefix });

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// A day ahead of the wall clock, on a whole minute: no sweep by real time ever finds these events due.
const T0 = Math.ceil((Date.now() + DAY) / MINUTE) * MINUTE;

beforeAll(async () => {
  database = await isolatedDatabase('reminders');
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix, DATABASE_URL: database.url });
  // The sweep makes the messages, with their links: it needs the gateway's public address.
  worker = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, DATABASE_URL: database.url, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', PUBLIC_BASE_URL: gw.baseUrl });
  sweeper = startReminderSweeper(worker.ctx);
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Reminders', timezone: 'UTC' })).body.data;
});
afterAll(async () => {
  await sweeper.stop();
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await reminderQueue.obliterate({ force: true });
  await reminderQueue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
  await database.drop();
});

/** Both clocks (the gateway's, which schedules, and the worker's, which sweeps) at T0 + ms. */
function at(ms: number): void {
  gw.clock.set(new Date(T0 + ms));
  (worker.ctx.clock as typeof gw.clock).set(new Date(T0 + ms));
}

const iso = (ms: number) => new Date(T0 + ms).toISOString();
const eventsPath = () => `/api/calendars/${cal.public_id}/events`;
type Evt = { public_id: string; uid: string; email_reminders: number[] };

async function newEvent(body: Record<string, unknown>): Promise<Evt> {
  const res = await team.api.post(eventsPath(), { title: 'Standup', timezone: 'UTC', has_rsvp: true, date_start: iso(61 * MINUTE), date_end: iso(91 * MINUTE), ...body });
  expect(res.status).toBe(200);
  return res.body.data as Evt;
}
const invite = async (evt: Evt, emails: string[]) =>
  expect((await team.api.post(`${eventsPath()}/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) })).status).toBe(200);
/** A first answer on the event page: received (202), its key emailed to the address. */
const rsvp = async (evt: Evt, email: string, answer: string) =>
  expect((await gw.anon.post(`/e/${evt.uid}/rsvp`, { name: email.split('@')[0], email, answer })).status).toBe(202);

/** The reminders this address received (invitations and RSVP confirmations left out). */
const remindersTo = (email: string) => sink.for(email).filter((m) => m.parsed.subject?.startsWith('Reminder:'));
const reminderRows = (evt: Evt) =>
  gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where({ 'e.uid': evt.uid, 'd.kind': 'reminder' }).orderBy('d.id').select('d.email', 'd.status', 'd.occurrence_at', 'd.reminder_minutes');
/** Sweeps until the event's due reminders are made, then waits until every one is done with (sent or skipped). */
async function sweepAndDeliver(evt: Evt, rows: number): Promise<void> {
  await waitFor(async () => (await sweeper.sweep()) && (await reminderRows(evt)).length === rows, { what: `${rows} reminder rows` });
  await waitFor(async () => (await reminderRows(evt)).every((r) => r.status !== 'queued'), { what: 'the reminders to be sent' });
}
/** A header as sent (mailparser folds the List-* ones into one object), unfolded (RFC 5322). */
const header = (mail: ReceivedMail, name: string) =>
  mail.raw
    .slice(0, mail.raw.indexOf('\r\n\r\n'))
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}: `))
    ?.slice(name.length + 2);
const unsubscribeUrl = (mail: ReceivedMail) => /^<(.+)>$/.exec(String(header(mail, 'List-Unsubscribe')))?.[1] as string;

describe('email reminders', () => {
  it('reminds each invitee who has not declined and each yes or maybe, once; no one else', async () => {
    at(0);
    const evt = await newEvent({ email_reminders: [60] });
    expect(evt.email_reminders).toEqual([60]);
    const d = (name: string) => `${name}.r1@example.test`;
    await invite(evt, [d('ann'), d('bo'), d('cy'), d('gus'), d('hal')]);
    await rsvp(evt, d('bo'), 'yes'); // an invitee who also answered: one message
    await rsvp(evt, d('dee'), 'yes');
    await rsvp(evt, d('eve'), 'maybe');
    await rsvp(evt, d('fay'), 'no');
    await rsvp(evt, d('gus'), 'no'); // an invitee whose RSVP is no
    // cy declined from their calendar app after being invited (the inbound-mail service records it so).
    await gw.db('invitees').where({ email: d('cy') }).update({ response: 'declined' });
    // hal's server refused the team's mail for good.
    await gw.db('mail_suppressions').insert({ team_id: team.teamId, email: d('hal'), reason: '550 no such user' });

    // Not yet due: nothing.
    at(30 * 1000);
    await sweeper.sweep();
    expect(await reminderRows(evt)).toEqual([]);

    at(MINUTE + 5000);
    await sweepAndDeliver(evt, 5);
    // Swept again (a second sweep, another worker): nothing more.
    await sweeper.sweep();
    for (const who of ['ann', 'bo', 'dee', 'eve']) await waitFor(() => remindersTo(d(who)).length === 1, { what: `the reminder to ${who}` });
    for (const who of ['cy', 'fay', 'gus', 'hal']) expect(remindersTo(d(who))).toHaveLength(0);
    const rows = await reminderRows(evt);
    expect(rows.map((r) => [r.email, r.status]).sort()).toEqual([
      [d('ann'), 'sent'],
      [d('bo'), 'sent'],
      [d('dee'), 'sent'],
      [d('eve'), 'sent'],
      [d('hal'), 'skipped'],
    ]);

    const mail = remindersTo(d('ann'))[0];
    expect(mail.parsed.subject).toMatch(/^Reminder: Standup @ /);
    // No calendar part: a reminder never changes the person's calendar entry.
    expect(mail.calendar).toBe('');
    expect(mail.parsed.text).toContain(`Event page: ${gw.baseUrl}/e/${evt.uid}`);
    // RFC 8058 one-click unsubscribe, signed for this recipient.
    expect(header(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(unsubscribeUrl(mail)).toMatch(new RegExp(`^${gw.baseUrl}/e/${evt.uid}/reminders/unsubscribe\\?email=ann\\.r1%40example\\.test&signature=[\\w-]{43}$`));
    expect(await gw.db('events').where({ uid: evt.uid }).first('next_reminder_at')).toEqual({ next_reminder_at: null });
  });

  it("reminds in the calendar's language", async () => {
    at(0);
    const nl = (await team.api.post('/api/calendars', { name: 'Club', timezone: 'UTC', locale: 'nl' })).body.data;
    const res = await team.api.post(`/api/calendars/${nl.public_id}/events`, { title: 'Vergadering', timezone: 'UTC', date_start: iso(61 * MINUTE), date_end: iso(91 * MINUTE), email_reminders: [60] });
    const evt = res.body.data as Evt;
    await team.api.post(`/api/calendars/${nl.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'nl.r5@example.test' }] });
    at(MINUTE + 5000);
    await sweepAndDeliver(evt, 1);
    const mail = await waitFor(() => sink.for('nl.r5@example.test').find((m) => m.parsed.subject?.startsWith('Herinnering: ')), { what: 'the Dutch reminder' });
    expect(mail.parsed.subject).toMatch(/^Herinnering: Vergadering @ /);
    expect(mail.parsed.text).toMatch(/^Binnenkort:\n/);
    expect(mail.parsed.text).toContain(`Evenementpagina: ${gw.baseUrl}/e/${evt.uid}\n`);
    expect(mail.parsed.text).toContain(`Geen herinneringen meer voor dit evenement: ${unsubscribeUrl(mail)}`);
    expect(mail.parsed.html).toMatch(/<html lang="nl"/);
  });

  it('a moved event is reminded at its new time, never at its old one', async () => {
    at(0);
    const evt = await newEvent({ title: 'Moved', email_reminders: [60] });
    await invite(evt, ['mo.r2@example.test']);
    expect((await team.api.put(`${eventsPath()}/${evt.public_id}`, { title: 'Moved', timezone: 'UTC', date_start: iso(3 * HOUR), date_end: iso(4 * HOUR) })).status).toBe(200);
    at(MINUTE + 5000);
    await sweeper.sweep();
    expect(await reminderRows(evt)).toEqual([]);
    at(2 * HOUR + 5000);
    await sweepAndDeliver(evt, 1);
    const rows = await reminderRows(evt);
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0].occurrence_at).getTime()).toBe(T0 + 3 * HOUR);
    await waitFor(() => remindersTo('mo.r2@example.test').length === 1, { what: 'the reminder' });

    // Moved earlier: reminded at the earlier time (not left waiting for the old one).
    at(0);
    const early = await newEvent({ title: 'Earlier', email_reminders: [60], date_start: iso(3 * HOUR), date_end: iso(4 * HOUR) });
    await invite(early, ['early.r2@example.test']);
    expect((await team.api.put(`${eventsPath()}/${early.public_id}`, { title: 'Earlier', timezone: 'UTC', date_start: iso(61 * MINUTE), date_end: iso(91 * MINUTE) })).status).toBe(200);
    at(MINUTE + 5000);
    await sweepAndDeliver(early, 1);
    await waitFor(() => remindersTo('early.r2@example.test').length === 1, { what: 'the reminder of the event moved earlier' });
  });

  it("is sent when its delayed job comes due, with no sweep; a moved event's old job and a deleted event's do nothing", async () => {
    // The job the gateway queued for the event's reminder due at T0 + ms (named by uid and time).
    const jobAt = (evt: Evt, ms: number) => waitFor(() => reminderQueue.getJob(`reminder-${evt.uid}-${T0 + ms}`), { what: `the reminder job due at T0 + ${ms} ms` });
    /** Promotes the delayed job (it comes due now, as BullMQ would at its time) and waits until it is done with. */
    const due = async (evt: Evt, ms: number) => {
      const job = await jobAt(evt, ms);
      expect(await job.getState()).toBe('delayed');
      await job.promote();
      await waitFor(async () => (await reminderQueue.getJob(job.id as string)) === undefined, { what: 'the job to be done with' });
    };
    at(0);
    const evt = await newEvent({ title: 'By job', email_reminders: [60] });
    await invite(evt, ['job.r7@example.test']);
    // Moved two hours later: a job for the new time beside the old one.
    expect((await team.api.put(`${eventsPath()}/${evt.public_id}`, { title: 'By job', timezone: 'UTC', date_start: iso(3 * HOUR), date_end: iso(4 * HOUR) })).status).toBe(200);
    at(MINUTE + 5000);
    await due(evt, MINUTE);
    expect(await reminderRows(evt)).toEqual([]);
    at(2 * HOUR + 5000);
    await due(evt, 2 * HOUR);
    await waitFor(() => remindersTo('job.r7@example.test').length === 1, { what: 'the reminder, sent by its job' });
    const rows = await reminderRows(evt);
    expect(rows.map((r) => [r.email, new Date(r.occurrence_at).getTime()])).toEqual([['job.r7@example.test', T0 + 3 * HOUR]]);
    // A sweep after the job finds nothing more to send.
    await sweeper.sweep();
    expect(await reminderRows(evt)).toHaveLength(1);

    // Deleted before its reminder: its job, come due, sends nothing.
    at(0);
    const gone = await newEvent({ title: 'Gone', email_reminders: [60] });
    await invite(gone, ['gone.r7@example.test']);
    expect((await team.api.delete(`${eventsPath()}/${gone.public_id}`)).status).toBe(200);
    at(MINUTE + 5000);
    await due(gone, MINUTE);
    expect(await reminderRows(gone)).toEqual([]);
  });

  it('a deleted event reminds no one', async () => {
    at(0);
    const evt = await newEvent({ title: 'Deleted', email_reminders: [60] });
    await invite(evt, ['del.r3@example.test']);
    expect((await team.api.delete(`${eventsPath()}/${evt.public_id}`)).status).toBe(200);
    at(MINUTE + 5000);
    await sweeper.sweep();
    expect(await reminderRows(evt)).toEqual([]);
  });

  it('an occurrence already started is not reminded late', async () => {
    at(0);
    const evt = await newEvent({ title: 'Late', email_reminders: [60] });
    await invite(evt, ['late.r4@example.test']);
    // No sweep ran until the event had begun (every worker was down).
    at(62 * MINUTE);
    await sweeper.sweep();
    expect(await reminderRows(evt)).toEqual([]);
    expect(await gw.db('events').where({ uid: evt.uid }).first('next_reminder_at')).toEqual({ next_reminder_at: null });
  });

  it("takes the calendar's default reminders when an event names none", async () => {
    const own = (await team.api.post('/api/calendars', { name: 'Defaults', timezone: 'UTC', default_email_reminders: [1440, 60] })).body.data;
    expect(own.default_email_reminders).toEqual([1440, 60]);
    const res = await team.api.post(`/api/calendars/${own.public_id}/events`, { title: 'Defaulted', timezone: 'UTC', date_start: iso(2 * DAY), date_end: iso(2 * DAY + HOUR) });
    expect(res.body.data.email_reminders).toEqual([1440, 60]);
    const none = await team.api.post(`/api/calendars/${own.public_id}/events`, { title: 'None', timezone: 'UTC', date_start: iso(2 * DAY), date_end: iso(2 * DAY + HOUR), email_reminders: null });
    expect(none.body.data.email_reminders).toEqual([]);
    expect((await team.api.post(eventsPath(), { title: 'Bad', timezone: 'UTC', date_start: iso(DAY), date_end: iso(DAY), email_reminders: [1, 2, 3, 4, 5, 6] })).status).toBe(422);
    expect((await team.api.post(eventsPath(), { title: 'Bad', timezone: 'UTC', date_start: iso(DAY), date_end: iso(DAY), email_reminders: [40_321] })).status).toBe(422);
  });

  it('a repeating event is reminded before each occurrence; unsubscribing stops the next ones, and opening the link changes nothing', async () => {
    at(0);
    const evt = await newEvent({ title: 'Daily', email_reminders: [60], recurrence_rule: 'FREQ=DAILY;COUNT=3' });
    await invite(evt, ['una.r5@example.test', 'ben.r5@example.test']);
    at(MINUTE + 5000);
    await sweepAndDeliver(evt, 2);
    await waitFor(() => remindersTo('una.r5@example.test').length === 1, { what: 'the first reminder' });
    expect(await gw.db('events').where({ uid: evt.uid }).first('next_reminder_at')).toEqual({ next_reminder_at: expect.anything() });
    // Only the next occurrence's reminder is scheduled, as a job delayed until it is due.
    const nextJob = await reminderQueue.getJob(`reminder-${evt.uid}-${T0 + DAY + MINUTE}`);
    expect([await nextJob?.getState(), nextJob?.data.event]).toEqual(['delayed', evt.uid]);
    expect(await reminderQueue.getJob(`reminder-${evt.uid}-${T0 + 2 * DAY + MINUTE}`)).toBeUndefined();

    at(DAY + MINUTE + 5000);
    await sweepAndDeliver(evt, 4);
    await waitFor(() => remindersTo('una.r5@example.test').length === 2 && remindersTo('ben.r5@example.test').length === 2, { what: 'the second reminders' });
    const occurrences = (await reminderRows(evt)).filter((r) => r.email === 'una.r5@example.test').map((r) => new Date(r.occurrence_at).getTime());
    expect(occurrences).toEqual([T0 + 61 * MINUTE, T0 + DAY + 61 * MINUTE]);
    // Each message shows its own occurrence's date.
    const [first, second] = remindersTo('una.r5@example.test');
    expect(first.parsed.subject).not.toBe(second.parsed.subject);

    // ben opens the link (as a mail scanner would): a page with a button, nothing recorded.
    const url = unsubscribeUrl(remindersTo('ben.r5@example.test')[1]);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
    expect(await gw.db('reminder_optouts').count<Array<{ n: number }>>('* as n')).toEqual([{ n: 0 }]);
    // A forged signature does nothing.
    expect((await fetch(url.replace('ben.r5', 'una.r5'), { method: 'POST' })).status).toBe(403);
    // The one-click POST a mail client sends (RFC 8058).
    const done = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('will get no more email reminders');

    at(2 * DAY + MINUTE + 5000);
    await sweepAndDeliver(evt, 5);
    await waitFor(() => remindersTo('una.r5@example.test').length === 3, { what: 'the third reminder' });
    expect(remindersTo('ben.r5@example.test')).toHaveLength(2);
    // The series is over: nothing more to send.
    expect(await gw.db('events').where({ uid: evt.uid }).first('next_reminder_at')).toEqual({ next_reminder_at: null });
  });
});

describe('a mail worker killed in the middle of a sweep', () => {
  const killPrefix = isolatedPrefix('reminders_kill');
  const procs: Spawned[] = [];
  let killGw: TestGateway;
  afterAll(async () => {
    for (const p of procs) await crash(p);
    const emails = new Queue('emails', { connection: queueRedis, prefix: killPrefix });
    await emails.obliterate({ force: true });
    await emails.close();
    await killGw?.close();
  });

  it('sends each reminder once when another worker sweeps after it', async () => {
    killGw = await startGateway({ QUEUE_PREFIX: killPrefix, DATABASE_URL: database.url });
    const killTeam = await killGw.newTeam();
    const killCal = (await killTeam.api.post('/api/calendars', { name: 'Kill', timezone: 'UTC' })).body.data;
    // Made five minutes ago by the gateway's clock, due two minutes ago by the real one and
    // starting in 57 minutes: the worker processes, on the real clock, find it due at once.
    const now = Date.now();
    killGw.clock.set(new Date(now - 5 * MINUTE));
    const start = new Date(now + 57 * MINUTE).toISOString();
    const end = new Date(now + 87 * MINUTE).toISOString();
    const evt = (await killTeam.api.post(`/api/calendars/${killCal.public_id}/events`, { title: 'Killed', timezone: 'UTC', date_start: start, date_end: end, email_reminders: [60] })).body.data;
    const emails = ['k1.r6@example.test', 'k2.r6@example.test', 'k3.r6@example.test'];
    await killTeam.api.post(`/api/calendars/${killCal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
    await waitFor(() => emails.every((e) => sink.for(e).length === 1), { what: 'the invitations' }).catch(() => undefined);

    const env = { QUEUE_PREFIX: killPrefix, DATABASE_URL: database.url, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', WORKER_LOCK_MS: '2000', REMINDER_SWEEP_MS: '200' };
    // The sweep stops on the opt-out list, held here, with the event row locked and its transaction open.
    const hold = await gw.db.transaction();
    try {
      await hold.raw('LOCK TABLE reminder_optouts IN ACCESS EXCLUSIVE MODE');
      const first = await spawnWorker('mail-worker', env);
      procs.push(first);
      await waitFor(async () => (await gw.db.raw("SELECT 1 FROM pg_locks WHERE relation = 'reminder_optouts'::regclass AND NOT granted")).rows.length > 0, {
        what: 'the sweep to wait on the opt-out list',
      });
      await crash(first);
    } finally {
      await hold.rollback();
    }
    expect(await gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where({ 'e.uid': evt.uid, 'd.kind': 'reminder' }).count<Array<{ n: number }>>('* as n')).toEqual([{ n: 0 }]);

    procs.push(await spawnWorker('mail-worker', env));
    for (const e of emails) await waitFor(() => remindersTo(e).length === 1, { what: `the reminder to ${e}`, timeoutMs: 20_000 });
    // A few sweeps later: still one each.
    const rows = () => gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where({ 'e.uid': evt.uid, 'd.kind': 'reminder' }).select('d.email', 'd.status');
    await waitFor(async () => (await rows()).every((r) => r.status === 'sent'), { what: 'the rows sent' });
    expect((await rows()).map((r) => r.email).sort()).toEqual(emails);
    for (const e of emails) expect(remindersTo(e)).toHaveLength(1);
  });
});
