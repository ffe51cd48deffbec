import { Queue } from 'bullmq';
import { icsUid } from '../../shared/calendar/ics';
import type { MailJob } from '../../shared/queues/mail.job';
import { mailJobOf, reread } from '../helpers/mail-job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * Gateway → queue → mail worker → a real SMTP server on loopback, each message parsed.
 * The sink's answer depends on the recipient: bounce… is refused for good (550),
 * greylist… is told to come back (451) twice and then accepted.
 */
const prefix = isolatedPrefix('mail_e2e');
let sink: SmtpSink;
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
let team: TestTeam;
let cal: { public_id: string };
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });

beforeAll(async () => {
  sink = await startSmtpSink({
    answer: ({ to, tries }) => {
      if (to.some((r) => r.startsWith('bounce'))) return { code: 550, message: '5.1.1 <bounce@example.test>: Recipient address rejected: User unknown' };
      if (to.some((r) => r.startsWith('greylist')) && tries <= 2) return { code: 451, message: '4.7.1 Greylisted, please try again later' };
      return 'accept';
    },
  });
  // Retries 20 ms apart (doubling) keep the retry test short; the gateway stamps them on each job.
  gw = await startGateway({ QUEUE_PREFIX: prefix, MAIL_BACKOFF_MS: '20', MAIL_MAX_ATTEMPTS: '5' });
  worker = await startWorker((ctx) => mailWorker(ctx), {
    QUEUE_PREFIX: prefix,
    SMTP_URL: sink.url,
    MAIL_FROM: 'Acme Events <events@acme.test>',
    MAIL_RATE_PER_SECOND: '0',
  });
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'America/New_York' })).body.data;
});
afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
  await sink.close();
});

const review = { title: 'Quarterly review', date_start: '2026-07-14 13:00', date_end: '2026-07-14 14:30', timezone: 'America/New_York', location: 'HQ, Room 4', description: 'Numbers & plans' };
const newEvent = async (body: object = review) => (await team.api.post(`/api/calendars/${cal.public_id}/events`, body)).body.data as { public_id: string; uid: string };
const eventPath = (evt: { public_id: string }) => `/api/calendars/${cal.public_id}/events/${evt.public_id}`;
const invitesPath = (evt: { public_id: string }) => `${eventPath(evt)}/invites`;
const invitees = async (evt: { public_id: string }) => (await team.api.get(invitesPath(evt))).body.data as Array<{ email: string; last_delivery: Record<string, unknown> }>;
const deliveries = async (evt: { uid: string }) =>
  gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where('e.uid', evt.uid).orderBy('d.id').select('d.id', 'd.email', 'd.kind', 'd.status', 'd.attempts', 'd.error');

/** Waits for the n-th message (1-based) to this recipient. */
const nth = (recipient: string, n: number, what: string) => waitFor(() => sink.for(recipient)[n - 1], { what: `${what} for ${recipient}` });

/** A property of the VEVENT in the calendar part, e.g. prop(mail, 'SEQUENCE') → '2' (METHOD: of the VCALENDAR). */
function prop(mail: ReceivedMail, name: string): string | undefined {
  const text = mail.calendar.replace(/\r\n/g, '\n');
  const scope = name === 'METHOD' ? text : text.slice(text.indexOf('BEGIN:VEVENT'));
  return new RegExp(`^${name}[;:](.*)$`, 'm').exec(scope)?.[1];
}

/** The worker's count of messages of a kind and outcome (calendar_email_deliveries_total). */
async function delivered(kind: string, outcome: string): Promise<number> {
  const text = (await worker.ctx.metrics.exposition()).body;
  const line = text.split('\n').find((l) => l.startsWith('calendar_email_deliveries_total{') && l.includes(`kind="${kind}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const calendarContentType = (mail: ReceivedMail) => /^Content-Type: (text\/calendar[^\r\n]*)/m.exec(mail.raw)?.[1];

describe('invitation, update and cancellation', () => {
  it("names the calendar's own organizer when it has one: ORGANIZER, From's name and Reply-To", async () => {
    const own = (await team.api.post('/api/calendars', { name: 'Board', timezone: 'UTC', organizer_name: 'Dana Board', organizer_email: 'dana@board.example' })).body.data;
    expect(own).toMatchObject({ organizer_name: 'Dana Board', organizer_email: 'dana@board.example' });
    const evt = (await team.api.post(`/api/calendars/${own.public_id}/events`, { title: 'Board meeting', date_start: '2030-03-01 10:00', date_end: '2030-03-01 11:00', timezone: 'UTC' })).body.data;
    await team.api.post(`/api/calendars/${own.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'member@board.example' }] });
    const mail = await nth('member@board.example', 1, 'the invitation');
    expect(prop(mail, 'ORGANIZER')).toBe('CN="Dana Board":mailto:dana@board.example');
    expect(mail.parsed.from).toMatchObject({ value: [{ address: 'events@acme.test', name: 'Dana Board via Acme Events' }] });
    expect(mail.parsed.replyTo).toMatchObject({ value: [{ address: 'dana@board.example', name: 'Dana Board' }] });
  });

  it('delivers each as an iTIP message with the event UID and a rising SEQUENCE', async () => {
    const evt = await newEvent();
    const uid = icsUid(evt.uid, new URL(gw.baseUrl).host);
    const ann = 'ann@example.test';
    await team.api.post(invitesPath(evt), { invitees: [{ email: ann, name: 'Ann Lee' }, { email: 'bo@example.test' }] });

    const invitation = await nth(ann, 1, 'the invitation');
    expect(invitation.parsed.to).toMatchObject({ value: [{ address: ann, name: 'Ann Lee' }] });
    // From is the service's address, named for the organizer (the team's owner: the calendar names none); replies go to them.
    const owner = await gw.db('users').first('name', 'email').where({ team_id: team.teamId }).orderBy('id');
    expect(invitation.parsed.from).toMatchObject({ value: [{ address: 'events@acme.test', name: `${owner.name} via Acme Events` }] });
    expect(invitation.parsed.replyTo).toMatchObject({ value: [{ address: owner.email, name: owner.name }] });
    expect(invitation.parsed.subject).toBe('Invitation: Quarterly review @ Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    expect(calendarContentType(invitation)).toBe('text/calendar; charset=utf-8; method=REQUEST');
    expect(prop(invitation, 'METHOD')).toBe('REQUEST');
    expect(prop(invitation, 'UID')).toBe(uid);
    expect(prop(invitation, 'SEQUENCE')).toBe('0');
    expect(prop(invitation, 'STATUS')).toBe('CONFIRMED');
    expect(prop(invitation, 'DTSTART')).toBe('TZID=America/New_York:20260714T130000');
    expect(prop(invitation, 'DTEND')).toBe('TZID=America/New_York:20260714T143000');
    expect(prop(invitation, 'DTSTAMP')).toMatch(/^\d{8}T\d{6}Z$/);
    // The ORGANIZER a calendar app sends an Accept or Decline to: a person, not the service's sending address.
    expect(prop(invitation, 'ORGANIZER')).toBe(`CN="${owner.name}":mailto:${owner.email}`);
    expect(prop(invitation, 'ATTENDEE')).toBe('ROLE=REQ-PARTICIPANT;RSVP=TRUE;CN="Ann Lee":MAILTO:ann@example.test');
    // Only the recipient is listed: invitees never see each other's addresses.
    expect(invitation.calendar).not.toContain('bo@example.test');
    expect(invitation.parsed.text).toContain('When: Tue 14 Jul 2026, 13:00–14:30 (America/New_York, UTC-04:00)');
    expect(invitation.parsed.text).toContain('Where: HQ, Room 4');
    expect(invitation.parsed.text).toContain('Numbers & plans');
    expect(invitation.parsed.text).toContain(`Event page: ${gw.baseUrl}/e/${evt.uid}`);
    expect(invitation.parsed.html).toContain(`<a href="${gw.baseUrl}/e/${evt.uid}"`);
    expect(invitation.parsed.html).toContain(`<a href="${gw.baseUrl}/e/${evt.uid}/google"`);
    expect(invitation.parsed.html).toContain('Numbers &amp; plans');

    await waitFor(async () => (await invitees(evt)).every((i) => i.last_delivery.status === 'sent'), { what: 'both invitations recorded sent' });
    const listed = (await invitees(evt))[0].last_delivery;
    expect(listed).toEqual({ kind: 'invitation', status: 'sent', attempts: 1, error: null, sent_at: expect.stringMatching(/Z$/) });

    // Changed without the flag: nobody is told. With it: everyone gets an update.
    const moved = { ...review, date_start: '2026-07-15 09:00', date_end: '2026-07-15 10:00' };
    expect((await team.api.put(eventPath(evt), moved)).status).toBe(200);
    expect((await team.api.put(eventPath(evt), { ...moved, title: 'Quarterly review (moved)', send_invite_updates: true })).status).toBe(200);
    const update = await nth(ann, 2, 'the update');
    expect(update.parsed.subject).toBe('Updated invitation: Quarterly review (moved) @ Wed Jul 15, 2026 9:00 AM - 10:00 AM (EDT)');
    expect(calendarContentType(update)).toBe('text/calendar; charset=utf-8; method=REQUEST');
    expect(prop(update, 'METHOD')).toBe('REQUEST');
    expect(prop(update, 'UID')).toBe(uid);
    expect(prop(update, 'DTSTART')).toBe('TZID=America/New_York:20260715T090000');
    expect(prop(update, 'ATTENDEE')).toContain('MAILTO:ann@example.test');

    const del = await team.api.delete(eventPath(evt), { notify_invitees: true });
    expect(del.body.data).toEqual({ public_id: evt.public_id, deleted: true, invitees_notified: 2 });
    const cancellation = await nth(ann, 3, 'the cancellation');
    expect(cancellation.parsed.subject).toBe('Cancelled: Quarterly review (moved) @ Wed Jul 15, 2026 9:00 AM - 10:00 AM (EDT)');
    expect(calendarContentType(cancellation)).toBe('text/calendar; charset=utf-8; method=CANCEL');
    expect(prop(cancellation, 'METHOD')).toBe('CANCEL');
    expect(prop(cancellation, 'STATUS')).toBe('CANCELLED');
    expect(prop(cancellation, 'UID')).toBe(uid);
    expect(prop(cancellation, 'ATTENDEE')).toContain('MAILTO:ann@example.test');
    expect(cancellation.parsed.text).toContain('This event has been cancelled');
    expect(cancellation.parsed.text).not.toContain('Event page:');

    const sequences = [invitation, update, cancellation].map((m) => Number(prop(m, 'SEQUENCE')));
    expect(sequences[0]).toBeLessThan(sequences[1]);
    expect(sequences[1]).toBeLessThan(sequences[2]);

    // Every message made was sent once, and nothing else reached the server.
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    expect((await deliveries(evt)).map((d) => [d.email, d.kind])).toEqual([
      [ann, 'invitation'],
      ['bo@example.test', 'invitation'],
      [ann, 'update'],
      ['bo@example.test', 'update'],
      [ann, 'cancellation'],
      ['bo@example.test', 'cancellation'],
    ]);
    expect(sink.for(ann)).toHaveLength(3);
    expect(sink.for('bo@example.test')).toHaveLength(3);
  });

  it('writes all-day events as dates', async () => {
    const evt = await newEvent({ title: 'Offsite', is_all_day: true, date_start: '2026-04-14', date_end: '2026-04-16', timezone: 'Europe/Amsterdam' });
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'allday@example.test' }] });
    const mail = await nth('allday@example.test', 1, 'the invitation');
    expect(mail.parsed.subject).toBe('Invitation: Offsite @ Tue Apr 14, 2026 - Thu Apr 16, 2026 (all day)');
    expect(prop(mail, 'DTSTART')).toBe('VALUE=DATE:20260414');
    expect(prop(mail, 'DTEND')).toBe('VALUE=DATE:20260417');
  });

  it('gives a location set only as a URL, as the public .ics does', async () => {
    const evt = await newEvent({ ...review, location: null, location_url: 'https://meet.example.test/q3' });
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'remote@example.test' }] });
    const mail = await nth('remote@example.test', 1, 'the invitation');
    const ics = await fetch(`${gw.baseUrl}/e/${evt.uid}/ics`).then((r) => r.text());
    expect(prop(mail, 'LOCATION')).toBe('https://meet.example.test/q3');
    expect(ics).toContain('LOCATION:https://meet.example.test/q3');
    expect(mail.parsed.text).toContain('Where: https://meet.example.test/q3');
  });

  it("links a protected event's page with a signed pair, and a draft's page not at all", async () => {
    const evt = await newEvent({ ...review, access_code: 'board-only' });
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'locked@example.test' }] });
    const invitation = await nth('locked@example.test', 1, 'the invitation');
    const link = /^Event page: (\S+)$/m.exec(invitation.parsed.text as string)?.[1] as string;
    expect(link).toMatch(new RegExp(`^${gw.baseUrl}/e/${evt.uid}\\?expires=\\d+&signature=`));
    expect(prop(invitation, 'URL')).toBe(`VALUE=URI:${link}`);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(200);
    expect((await fetch(`${gw.baseUrl}/e/${evt.uid}`, { redirect: 'manual' })).status).toBe(403);

    await team.api.put(eventPath(evt), { ...review, access_code: 'board-only', is_draft: true, send_invite_updates: true });
    const update = await nth('locked@example.test', 2, 'the update');
    expect(update.parsed.text).not.toContain('Event page:');
    expect(update.parsed.html).not.toContain('Open the event page');
    expect(prop(update, 'URL')).toBeUndefined();
  });

  it('cancels for a removed invitee only, and the next update to the others outranks it', async () => {
    const evt = await newEvent();
    const added = (await team.api.post(invitesPath(evt), { invitees: [{ email: 'keep@example.test' }, { email: 'drop@example.test' }] })).body.data;
    const invitation = await nth('drop@example.test', 1, 'the invitation');
    await team.api.delete(`${invitesPath(evt)}/${added[1].id}`);
    const cancellation = await nth('drop@example.test', 2, 'the cancellation');
    expect(cancellation.parsed.subject).toBe('No longer on the guest list: Quarterly review @ Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    expect(cancellation.parsed.text).toContain('The organizer has taken you off the guest list of:');
    expect(cancellation.parsed.text).toContain('The event itself has not been cancelled.');
    expect(cancellation.parsed.text).not.toContain('Event page:');
    expect(prop(cancellation, 'METHOD')).toBe('CANCEL');
    // RFC 5546 §3.2.5: a CANCEL that takes attendees off an event carries no STATUS; the event goes on.
    expect(prop(cancellation, 'STATUS')).toBeUndefined();
    expect(prop(cancellation, 'UID')).toBe(prop(invitation, 'UID'));
    expect(prop(cancellation, 'ATTENDEE')).toContain('MAILTO:drop@example.test');
    expect(Number(prop(cancellation, 'SEQUENCE'))).toBeGreaterThan(Number(prop(invitation, 'SEQUENCE')));

    await team.api.put(eventPath(evt), { ...review, title: 'Renamed', send_invite_updates: true });
    const update = await nth('keep@example.test', 2, 'the update');
    expect(Number(prop(update, 'SEQUENCE'))).toBeGreaterThan(Number(prop(cancellation, 'SEQUENCE')));
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    expect(sink.for('drop@example.test')).toHaveLength(2);
  });
});

describe('RSVP confirmations', () => {
  const answerLink = (mail: ReceivedMail) => /^Change your answer: (\S+)$/m.exec(mail.parsed.text as string)?.[1] as string;
  // Like the person who answered: the answer's key comes only by email (the change link of
  // the first message about it), and goes with each later answer from that address.
  const answered = new Set<string>();
  const keys = new Map<string, string>();
  async function keyFor(evt: { uid: string }, email: string): Promise<string | undefined> {
    const id = `${evt.uid} ${email}`;
    if (!keys.has(id) && answered.has(id)) {
      const link = await waitFor(() => sink.for(email).map(answerLink).find((l) => l?.startsWith(`${gw.baseUrl}/e/${evt.uid}/rsvp?key=`)), { what: `the answer link for ${email}` });
      keys.set(id, new URL(link).searchParams.get('key') as string);
    }
    return keys.get(id);
  }
  async function rsvp(evt: { uid: string }, body: Record<string, string>) {
    const email = body.email.toLowerCase();
    const key = await keyFor(evt, email);
    const res = await gw.anon.post(`/e/${evt.uid}/rsvp`, { ...body, ...(key ? { key } : {}) });
    // A first answer is received (202, no key); one with its key is saved (200, with it).
    expect([res.status, res.body.data?.key]).toEqual(key ? [200, key] : [202, undefined]);
    answered.add(`${evt.uid} ${email}`);
    return res;
  }

  it('an answer changes only with its key: the address gets its link, which opens the change', async () => {
    const evt = await newEvent({ ...review, has_rsvp: true });
    const guest = 'keyed@example.test';
    expect((await rsvp(evt, { name: 'Kay', email: guest, answer: 'yes' })).status).toBe(202);
    const yes = await nth(guest, 1, 'the yes confirmation');
    const link = answerLink(yes);
    expect(link).toMatch(new RegExp(`^${gw.baseUrl}/e/${evt.uid}/rsvp\\?key=`));
    expect(yes.parsed.html).toContain('>Change your answer</a>');

    // Someone else types the address: the yes stands, and the address is told how to change it.
    const spoof = await gw.anon.post(`/e/${evt.uid}/rsvp`, { name: 'Not Kay', email: guest, answer: 'no' });
    expect([spoof.status, spoof.body, spoof.headers.get('set-cookie')]).toEqual([202, { data: { status: 'received' } }, null]);
    const notice = await nth(guest, 2, 'the answer link');
    expect(notice.parsed.subject).toBe('Change your answer: Quarterly review @ Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    expect(notice.parsed.text).toContain('Until it is used, that answer stays as it is (if the address had answered before, its earlier answer).');
    expect(notice.calendar).toBe('');
    expect(answerLink(notice)).toBe(link);
    const rows = await gw.db('rsvps as r').join('events as e', 'e.id', 'r.event_id').where('e.uid', evt.uid).select('r.name', 'r.answer');
    expect(rows).toEqual([{ name: 'Kay', answer: 'yes' }]);
    // Asked again before anything changed: no second notice (one an hour at most).
    expect((await gw.anon.post(`/e/${evt.uid}/rsvp`, { name: 'Not Kay', email: guest, answer: 'maybe' })).status).toBe(202);

    // The link keeps the key in the browser; the page's form then changes the answer.
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`/e/${evt.uid}#rsvp-title`);
    const cookie = (opened.headers.get('set-cookie') as string).split(';')[0];
    const changed = await fetch(`${gw.baseUrl}/e/${evt.uid}/rsvp`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ name: 'Kay', email: guest, answer: 'no' }),
      redirect: 'manual',
    });
    expect([changed.status, changed.headers.get('location')]).toEqual([303, `/e/${evt.uid}?rsvp=thanks`]);
    const no = await nth(guest, 3, 'the cancellation for the no');
    expect(prop(no, 'METHOD')).toBe('CANCEL');
    expect(answerLink(no)).toBe(link);
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    expect((await deliveries(evt)).map((d) => d.kind)).toEqual(['rsvp_yes', 'rsvp_link', 'rsvp_no']);
  });

  it('confirms a yes and a maybe with the event as an already-answered invitation; a first no gets its answer link alone', async () => {
    const evt = await newEvent({ ...review, has_rsvp: true });
    const guest = 'guest@example.test';
    expect((await rsvp(evt, { name: 'Gus "G" Tan', email: guest, answer: 'yes' })).status).toBe(202);
    const yes = await nth(guest, 1, 'the yes confirmation');
    expect(yes.parsed.subject).toBe('You are going: Quarterly review @ Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    expect(yes.parsed.text).toContain('You said yes to');
    expect(calendarContentType(yes)).toContain('method=REQUEST');
    expect(prop(yes, 'METHOD')).toBe('REQUEST');
    expect(prop(yes, 'UID')).toBe(icsUid(evt.uid, new URL(gw.baseUrl).host));
    // Already answered: the calendar app files it as accepted and asks nothing more.
    expect(prop(yes, 'ATTENDEE')).toBe(`ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;RSVP=FALSE;CN="Gus 'G' Tan":MAILTO:${guest}`);

    // A maybe is confirmed as tentative.
    expect((await rsvp(evt, { name: 'Gus', email: guest, answer: 'maybe' })).status).toBe(200);
    const maybe = await nth(guest, 2, 'the maybe confirmation');
    expect(maybe.parsed.subject).toMatch(/^You might go: Quarterly review/);
    expect(prop(maybe, 'ATTENDEE')).toBe(`ROLE=REQ-PARTICIPANT;PARTSTAT=TENTATIVE;RSVP=FALSE;CN="Gus":MAILTO:${guest}`);

    // Yes again at the same SEQUENCE: already confirmed once, not sent again.
    expect((await rsvp(evt, { name: 'Gus', email: guest, answer: 'yes' })).status).toBe(200);
    expect((await deliveries(evt)).map((d) => d.kind)).toEqual(['rsvp_yes', 'rsvp_maybe']);
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'both confirmations recorded sent' });
    const rows = await gw.db('deliveries as d').join('rsvps as r', 'r.id', 'd.rsvp_id').where('r.email', guest).select('d.kind');
    expect(rows).toHaveLength(2);

    // Someone whose first answer is no never had the event: no calendar part, only the link
    // that changes the answer (its key reaches the address by email alone).
    expect((await rsvp(evt, { name: 'Noor', email: 'noor@example.test', answer: 'no' })).status).toBe(202);
    expect((await deliveries(evt)).map((d) => d.kind)).toEqual(['rsvp_yes', 'rsvp_maybe', 'rsvp_link']);
    const link = await nth('noor@example.test', 1, 'the answer link');
    expect(link.parsed.subject).toMatch(/^Change your answer: Quarterly review @ /);
    expect(link.parsed.text).toContain('An answer was given with this address on the event page of:');
    expect(link.calendar).toBe('');
    expect(answerLink(link)).toMatch(new RegExp(`^${gw.baseUrl}/e/${evt.uid}/rsvp\\?key=`));
    // The link works: with its key, Noor's answer changes.
    expect((await rsvp(evt, { name: 'Noor', email: 'noor@example.test', answer: 'maybe' })).status).toBe(200);
    expect((await nth('noor@example.test', 2, 'the maybe confirmation')).parsed.subject).toMatch(/^You might go: /);
  });

  it('takes the event out of the calendar of someone who changes to no, and puts it back when they answer again', async () => {
    const evt = await newEvent({ ...review, has_rsvp: true });
    const guest = 'changer@example.test';
    expect((await rsvp(evt, { name: 'Cy', email: guest, answer: 'yes' })).status).toBe(202);
    const yes = await nth(guest, 1, 'the yes confirmation');
    expect((await rsvp(evt, { name: 'Cy', email: guest, answer: 'no' })).status).toBe(200);
    const no = await nth(guest, 2, 'the cancellation for the no');
    expect(no.parsed.subject).toMatch(/^Not going: Quarterly review @ /);
    expect(no.parsed.text).toContain('You said no to');
    expect(calendarContentType(no)).toContain('method=CANCEL');
    expect(prop(no, 'METHOD')).toBe('CANCEL');
    expect(prop(no, 'STATUS')).toBeUndefined();
    expect(prop(no, 'UID')).toBe(prop(yes, 'UID'));
    expect(prop(no, 'ATTENDEE')).toBe(`ROLE=REQ-PARTICIPANT;PARTSTAT=DECLINED;RSVP=FALSE;CN="Cy":MAILTO:${guest}`);
    expect(Number(prop(no, 'SEQUENCE'))).toBeGreaterThan(Number(prop(yes, 'SEQUENCE')));

    // Answering maybe afterwards outranks the cancellation, so the calendar takes it back.
    expect((await rsvp(evt, { name: 'Cy', email: guest, answer: 'maybe' })).status).toBe(200);
    const back = await nth(guest, 3, 'the maybe confirmation');
    expect(prop(back, 'METHOD')).toBe('REQUEST');
    expect(Number(prop(back, 'SEQUENCE'))).toBeGreaterThan(Number(prop(no, 'SEQUENCE')));

    // An invitee's invitation stands whatever they answer on the page: their no sends nothing.
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'invited@example.test' }] });
    await nth('invited@example.test', 1, 'the invitation');
    expect((await rsvp(evt, { name: 'In', email: 'invited@example.test', answer: 'yes' })).status).toBe(202);
    await nth('invited@example.test', 2, 'the yes confirmation');
    expect((await rsvp(evt, { name: 'In', email: 'invited@example.test', answer: 'no' })).status).toBe(200);
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    expect((await deliveries(evt)).filter((d) => d.email === 'invited@example.test').map((d) => d.kind)).toEqual(['invitation', 'rsvp_yes']);
  });

  it('takes the event out of the calendar of someone whose yes the organizer deletes (invitees excepted)', async () => {
    const evt = await newEvent({ ...review, has_rsvp: true });
    const rsvpsPath = `${eventPath(evt)}/rsvps`;
    const idOf = async (email: string) => ((await team.api.get(rsvpsPath)).body.data as Array<{ id: string; email: string }>).find((r) => r.email === email)?.id;
    expect((await rsvp(evt, { name: 'Dee', email: 'dee@example.test', answer: 'yes' })).status).toBe(202);
    const yes = await nth('dee@example.test', 1, 'the yes confirmation');
    const removed = await team.api.delete(`${rsvpsPath}/${await idOf('dee@example.test')}`);
    expect(removed.body.data.cancellation_queued).toBe(true);
    const cancel = await nth('dee@example.test', 2, 'the cancellation');
    expect(cancel.parsed.subject).toMatch(/^No longer on the guest list: Quarterly review @ /);
    expect(prop(cancel, 'METHOD')).toBe('CANCEL');
    expect(prop(cancel, 'STATUS')).toBeUndefined();
    expect(prop(cancel, 'UID')).toBe(prop(yes, 'UID'));
    expect(prop(cancel, 'ATTENDEE')).toContain('MAILTO:dee@example.test');
    expect(Number(prop(cancel, 'SEQUENCE'))).toBeGreaterThan(Number(prop(yes, 'SEQUENCE')));

    // An invitee's invitation stands when their answer is deleted: nothing is sent.
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'inv2@example.test' }] });
    expect((await rsvp(evt, { name: 'Iv', email: 'inv2@example.test', answer: 'maybe' })).status).toBe(202);
    await nth('inv2@example.test', 2, 'the maybe confirmation');
    expect((await team.api.delete(`${rsvpsPath}/${await idOf('inv2@example.test')}`)).body.data.cancellation_queued).toBe(false);
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    expect((await deliveries(evt)).map((d) => `${d.kind} ${d.email}`)).toEqual([
      'rsvp_yes dee@example.test',
      'removal dee@example.test',
      'invitation inv2@example.test',
      'rsvp_maybe inv2@example.test',
    ]);
    expect(sink.for('dee@example.test')).toHaveLength(2);
    expect(await delivered('removal', 'sent')).toBeGreaterThanOrEqual(1);
  });

  it('sends the event as it is after an update, with its current SEQUENCE', async () => {
    const evt = await newEvent({ ...review, has_rsvp: true });
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'inv@example.test' }] });
    await team.api.put(eventPath(evt), { ...review, has_rsvp: true, title: 'Moved review', send_invite_updates: true });
    const update = await nth('inv@example.test', 2, 'the update');
    expect((await rsvp(evt, { name: 'Late', email: 'late@example.test', answer: 'yes' })).status).toBe(202);
    const confirmation = await nth('late@example.test', 1, 'the confirmation');
    expect(prop(confirmation, 'SUMMARY')).toBe('Moved review');
    expect(prop(confirmation, 'SEQUENCE')).toBe(prop(update, 'SEQUENCE'));
  });

  it('keeps the calendars of those who said yes or maybe right: they get updates and the cancellation, once each', async () => {
    // No invitees at all: the answers alone make an audience.
    const evt = await newEvent({ ...review, has_rsvp: true });
    expect((await rsvp(evt, { name: 'Yara', email: 'yara@example.test', answer: 'yes' })).status).toBe(202);
    expect((await rsvp(evt, { name: 'Max', email: 'max@example.test', answer: 'maybe' })).status).toBe(202);
    expect((await rsvp(evt, { name: 'Noa', email: 'noa@example.test', answer: 'no' })).status).toBe(202);
    // Invited and answered yes too: one message per change, as an invitee, with the answer kept.
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'both@example.test' }] });
    expect((await rsvp(evt, { name: 'Bea', email: 'Both@example.test', answer: 'yes' })).status).toBe(202);
    const confirmation = await nth('yara@example.test', 1, 'the yes confirmation');

    // Turning RSVPs off later does not forget who has the event in their calendar.
    await team.api.put(eventPath(evt), { ...review, has_rsvp: false, title: 'Review, moved', date_start: '2026-07-15 13:00', date_end: '2026-07-15 14:30', send_invite_updates: true });
    const yesUpdate = await nth('yara@example.test', 2, 'the update');
    expect(yesUpdate.parsed.subject).toMatch(/^Updated invitation: Review, moved @ Wed Jul 15, 2026/);
    expect(prop(yesUpdate, 'UID')).toBe(prop(confirmation, 'UID'));
    expect(Number(prop(yesUpdate, 'SEQUENCE'))).toBeGreaterThan(Number(prop(confirmation, 'SEQUENCE')));
    expect(prop(yesUpdate, 'ATTENDEE')).toBe('ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;RSVP=FALSE;CN="Yara":MAILTO:yara@example.test');
    expect(prop(await nth('max@example.test', 2, 'the update'), 'ATTENDEE')).toContain('PARTSTAT=TENTATIVE;RSVP=FALSE');
    expect(prop(await nth('both@example.test', 3, 'the update'), 'ATTENDEE')).toContain('PARTSTAT=ACCEPTED;RSVP=FALSE');

    const deleted = await team.api.delete(eventPath(evt), { notify_invitees: true });
    expect(deleted.body.data.invitees_notified).toBe(3);
    for (const [who, n] of [['yara@example.test', 3], ['max@example.test', 3], ['both@example.test', 4]] as const) {
      const cancellation = await nth(who, n, 'the cancellation');
      expect(prop(cancellation, 'METHOD')).toBe('CANCEL');
      expect(prop(cancellation, 'STATUS')).toBe('CANCELLED');
    }
    await waitFor(async () => (await deliveries(evt)).every((d) => d.status === 'sent'), { what: 'every delivery sent' });
    const byKind = (await deliveries(evt)).filter((d) => d.kind !== 'rsvp_yes' && d.kind !== 'rsvp_maybe' && d.kind !== 'invitation');
    expect(byKind.map((d) => `${d.kind} ${d.email.toLowerCase()}`).sort()).toEqual(
      [...['both', 'max', 'yara'].flatMap((who) => [`cancellation ${who}@example.test`, `update ${who}@example.test`]), 'rsvp_link noa@example.test'].sort(),
    );
    // A no never had the event: only its answer link was sent to them.
    expect(sink.for('noa@example.test').map((m) => m.parsed.subject?.split(':')[0])).toEqual(['Change your answer']);
    expect(sink.for('both@example.test')).toHaveLength(4); // invitation, yes confirmation, update, cancellation
  });
});

describe('languages', () => {
  // Dates as Intl writes them in a language: worked out here, not by the service's code.
  const intl = (locale: string, zone: string, zoneName: boolean) =>
    new Intl.DateTimeFormat(locale, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: zone, ...(zoneName ? { timeZoneName: 'short' as const } : {}) });
  const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  const PERSON = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

  it("writes a calendar's invitations in its locale: subject, text and HTML, lang, dates by Intl", async () => {
    const de = (await team.api.post('/api/calendars', { name: 'Verein', timezone: 'Europe/Berlin', locale: 'de' })).body.data;
    const path = `/api/calendars/${de.public_id}/events`;
    const evt = (await team.api.post(path, { title: 'Sommerfest', date_start: '2026-07-14 18:00', date_end: '2026-07-14 22:30', timezone: 'Europe/Berlin', location: 'Vereinsheim', has_rsvp: true })).body.data;
    await team.api.post(`${path}/${evt.public_id}/invites`, { invitees: [{ email: 'gast@example.test', name: 'Gast' }] });
    const mail = await nth('gast@example.test', 1, 'the German invitation');
    const [start, end] = [Date.UTC(2026, 6, 14, 16, 0), Date.UTC(2026, 6, 14, 20, 30)];
    const when = intl('de', 'Europe/Berlin', false).formatRange(start, end);
    expect(mail.parsed.subject).toBe(`Einladung: Sommerfest @ ${intl('de', 'Europe/Berlin', true).formatRange(start, end)}`);

    const owner = await gw.db('users').first('name').where({ team_id: team.teamId }).orderBy('id');
    const text = mail.parsed.text as string;
    expect(text).toMatch(new RegExp(`^Sie sind eingeladen:\n\nSommerfest\nVeranstaltet von ${owner.name}\n\nWann: `));
    expect(text).toContain(`Wann: ${when} (Europe/Berlin, UTC+02:00)\nWo: Vereinsheim\n`);
    expect(text).toMatch(/\nKommen Sie\?\n {2}Ja: \S+\n {2}Vielleicht: \S+\n {2}Nein: \S+\n/);
    expect(text).toContain(`Veranstaltungsseite: ${gw.baseUrl}/e/${evt.uid}\n`);
    expect(text).toContain(`Zum Kalender hinzufügen:\n  Apple: ${gw.baseUrl}/e/${evt.uid}/apple\n`);
    expect(text).toContain(`  iCal-Datei: ${gw.baseUrl}/e/${evt.uid}/ics\n`);
    expect(text).toContain(`Sie erhalten diese E-Mail, weil ${owner.name} Sie zu Sommerfest eingeladen hat.`);

    const html = mail.parsed.html as string;
    expect(html).toMatch(/<html lang="de"/);
    expect(html).toContain(`${escaped(when)} (Europe/Berlin, UTC+02:00)`);
    for (const words of ['Sie sind eingeladen:', `Veranstaltet von ${escaped(owner.name)}`, '>Wann</th>', '>Wo</th>', 'Kommen Sie?', '>Ja</a>', '>Vielleicht</a>', '>Nein</a>', '>Veranstaltungsseite öffnen</a>', 'Zum Kalender hinzufügen', '>iCal-Datei</a>']) {
      expect([words, html.includes(words)]).toEqual([words, true]);
    }
    for (const english of ['Organized by', '>When<', 'Will you attend?', 'Open the event page', 'Add to calendar', 'You received this']) {
      expect([english, html.includes(english) || text.includes(english)]).toEqual([english, false]);
    }
  });

  it("confirms an answer in the language its page was shown in, whatever the calendar's", async () => {
    // The calendar has no locale: its messages are English (the other tests' subjects).
    const evt = await newEvent({ ...review, has_rsvp: true });
    const [start, end] = [Date.UTC(2026, 6, 14, 17, 0), Date.UTC(2026, 6, 14, 18, 30)];
    // The page asked for in French keeps its language in its form, and after the answer.
    const page = await fetch(`${gw.baseUrl}/e/${evt.uid}?lang=fr`, { headers: { 'User-Agent': PERSON } }).then((r) => r.text());
    expect(page).toContain(`action="/e/${evt.uid}/rsvp?lang=fr"`);
    const answer = (query: string, headers: Record<string, string>, body: Record<string, string>) =>
      fetch(`${gw.baseUrl}/e/${evt.uid}/rsvp${query}`, { method: 'POST', headers: { 'User-Agent': PERSON, ...headers }, body: new URLSearchParams(body), redirect: 'manual' });
    const posted = await answer('?lang=fr', { 'Accept-Language': 'de' }, { name: 'Léa', email: 'lea@example.test', answer: 'yes' });
    expect([posted.status, posted.headers.get('location')]).toEqual([303, `/e/${evt.uid}?rsvp=received&lang=fr`]);
    const yes = await nth('lea@example.test', 1, 'the French confirmation');
    expect(yes.parsed.subject).toBe(`Vous participez\u00a0: Quarterly review @ ${intl('fr', 'America/New_York', true).formatRange(start, end)}`);
    expect(yes.parsed.text).toMatch(/^Merci pour votre réponse\. Vous avez répondu oui\u00a0:\n/);
    expect(yes.parsed.text).toContain(`Quand\u00a0: ${intl('fr', 'America/New_York', false).formatRange(start, end)} (America/New_York, UTC-04:00)\n`);
    expect(yes.parsed.text).toMatch(/^Changer votre réponse\u00a0: \S+$/m);
    expect(yes.parsed.html).toMatch(/<html lang="fr"/);
    expect(yes.parsed.html).toContain('>Changer votre réponse</a>');
    expect(prop(yes, 'METHOD')).toBe('REQUEST');

    // Accept-Language alone, too (here a first no: its answer link).
    await answer('', { 'Accept-Language': 'fr-CA,fr;q=0.9,en;q=0.5' }, { name: 'Luc', email: 'luc@example.test', answer: 'no' });
    const link = await nth('luc@example.test', 1, 'the French answer link');
    expect(link.parsed.subject?.startsWith('Changer votre réponse\u00a0: Quarterly review @ ')).toBe(true);
    expect(link.parsed.html).toMatch(/<html lang="fr"/);
    // A browser naming none of our languages: the calendar's, here English as before.
    await answer('', { 'Accept-Language': 'sv-SE,sv;q=0.9' }, { name: 'Siv', email: 'siv@example.test', answer: 'yes' });
    const english = await nth('siv@example.test', 1, 'the English confirmation');
    expect(english.parsed.subject).toBe('You are going: Quarterly review @ Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    expect(english.parsed.text).toContain('When: Tue 14 Jul 2026, 13:00–14:30 (America/New_York, UTC-04:00)');
    expect(english.parsed.html).toMatch(/<html lang="en"/);

    // What the organizer sends everyone (an update) is in the calendar's language.
    await team.api.put(eventPath(evt), { ...review, has_rsvp: true, title: 'Quarterly review, moved', send_invite_updates: true });
    const update = await nth('lea@example.test', 2, 'the update');
    expect(update.parsed.subject).toMatch(/^Updated invitation: Quarterly review, moved @ /);
  });
});

describe('failures', () => {
  it('records a 5xx refusal as failed with the reply, without retrying', async () => {
    const failedBefore = await delivered('invitation', 'failed');
    const evt = await newEvent();
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'bounce@example.test' }] });
    const [row] = await waitFor(async () => {
      const rows = await deliveries(evt);
      return rows[0]?.status === 'failed' && rows;
    }, { what: 'the delivery to fail' });
    expect(row).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/^550 .*User unknown/) });
    const job = await mailJobOf(queue, row.id);
    await waitFor(async () => (await job?.getState()) === 'failed', { what: 'the job to fail' });
    expect((await reread(queue, job))?.attemptsMade).toBe(1);
    expect(sink.tries('bounce@example.test')).toBe(1);
    expect((await invitees(evt))[0].last_delivery).toMatchObject({ kind: 'invitation', status: 'failed', attempts: 1, sent_at: null, error: expect.stringContaining('550') });
    expect(await delivered('invitation', 'failed')).toBe(failedBefore + 1);
  });

  it('does not email an address that refused the team for good, until the team lifts it', async () => {
    const address = 'bounce-twice@example.test';
    const first = await newEvent();
    await team.api.post(invitesPath(first), { invitees: [{ email: address }] });
    await waitFor(async () => (await deliveries(first))[0]?.status === 'failed', { what: 'the first message to bounce' });
    const listed = (await team.api.get('/api/mail-suppressions')).body.data as Array<{ email: string }>;
    expect(listed.filter((r) => r.email === address)).toEqual([expect.objectContaining({ email: address, reason: expect.stringMatching(/^550 /) })]);

    // A second invitation (another event) is recorded as skipped: nothing reaches the server.
    const second = await newEvent();
    expect((await team.api.post(invitesPath(second), { invitees: [{ email: 'Bounce-Twice@example.test' }] })).status).toBe(200);
    expect((await deliveries(second))[0]).toMatchObject({ status: 'skipped', error: expect.stringMatching(/^address suppressed: 550 /) });
    expect(sink.tries(address)).toBe(1);
    // Another team is not held back by this team's bounce.
    const other = await gw.newTeam();
    expect((await other.api.get('/api/mail-suppressions')).body.data).toEqual([]);

    // Lifted, the next message goes out again (and bounces again here).
    expect((await team.api.delete(`/api/mail-suppressions?email=${encodeURIComponent(address)}`)).body.data).toEqual({ email: address, deleted: true });
    expect((await team.api.delete(`/api/mail-suppressions?email=${encodeURIComponent(address)}`)).status).toBe(404);
    const third = await newEvent();
    await team.api.post(invitesPath(third), { invitees: [{ email: address }] });
    await waitFor(async () => (await deliveries(third))[0]?.status === 'failed', { what: 'the third message to bounce' });
    expect(sink.tries(address)).toBe(2);
  });

  it("stops all of a team's email to an address that unsubscribed with one click, and only that team's", async () => {
    const address = 'unsubscribes@example.test';
    const first = await newEvent();
    await team.api.post(invitesPath(first), { invitees: [{ email: address }] });
    const invitation = await nth(address, 1, 'the invitation');
    // The link as a mail client reads it: the List-Unsubscribe header, one-click (RFC 8058).
    const line = (name: string) => invitation.parsed.headerLines.find((h) => h.key === name)?.line.replace(/\r?\n[ \t]+/g, ' ');
    expect(line('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const url = /^List-Unsubscribe: <([^>]+)>$/.exec(line('list-unsubscribe') ?? '')?.[1] as string;
    expect(url).toMatch(new RegExp(`/e/${first.uid}/unsubscribe\\?email=`));
    expect(invitation.parsed.text).toContain(`Stop all email from this organizer: ${url}`);

    // Opening the link (as a mail scanner does) stops nothing: it shows a button.
    const opened = await fetch(url);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('<form method="post"');
    expect((await team.api.get('/api/mail-suppressions')).body.data.filter((r: { email: string }) => r.email === address)).toEqual([]);
    // A signature for another address stops nothing.
    const forged = await fetch(url.replace('unsubscribes%40', 'someone-else%40'), { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
    expect(forged.status).toBe(403);

    // The link is followed after its event is gone, as a cancellation's is.
    expect((await team.api.delete(eventPath(first))).status).toBe(200);
    const clicked = await fetch(url, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain('will get no more email from the organizer');
    expect((await team.api.get('/api/mail-suppressions')).body.data.filter((r: { email: string }) => r.email === address)).toEqual([
      expect.objectContaining({ email: address, reason: 'unsubscribed' }),
    ]);

    // Another event of the team: recorded skipped, nothing sent.
    const second = await newEvent();
    expect((await team.api.post(invitesPath(second), { invitees: [{ email: 'Unsubscribes@example.test' }] })).status).toBe(200);
    expect((await deliveries(second))[0]).toMatchObject({ status: 'skipped', error: 'address suppressed: unsubscribed' });
    // Another team still reaches the address.
    const other = await gw.newTeam();
    const theirs = (await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC' })).body.data;
    const theirEvent = (await other.api.post(`/api/calendars/${theirs.public_id}/events`, review)).body.data;
    await other.api.post(`/api/calendars/${theirs.public_id}/events/${theirEvent.public_id}/invites`, { invitees: [{ email: address }] });
    await nth(address, 2, "the other team's invitation");
    expect(sink.for(address)).toHaveLength(2);
  });

  it('retries a 4xx answer with backoff until the server accepts', async () => {
    const [retriedBefore, sentBefore] = [await delivered('invitation', 'retry'), await delivered('invitation', 'sent')];
    const evt = await newEvent();
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'greylist@example.test' }] });
    const mail = await nth('greylist@example.test', 1, 'the message after two refusals');
    expect(prop(mail, 'METHOD')).toBe('REQUEST');
    const [row] = await waitFor(async () => {
      const rows = await deliveries(evt);
      return rows[0]?.status === 'sent' && rows;
    }, { what: 'the delivery to be recorded sent' });
    expect(row).toMatchObject({ status: 'sent', attempts: 3, error: null });
    expect(sink.tries('greylist@example.test')).toBe(3);
    expect(sink.for('greylist@example.test')).toHaveLength(1);
    expect(await delivered('invitation', 'retry')).toBe(retriedBefore + 2);
    expect(await delivered('invitation', 'sent')).toBeGreaterThanOrEqual(sentBefore + 1);
  });

  it('never sends a message twice when its job runs again', async () => {
    const evt = await newEvent();
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'once@example.test' }] });
    await nth('once@example.test', 1, 'the invitation');
    const [row] = await waitFor(async () => {
      const rows = await deliveries(evt);
      return rows[0]?.status === 'sent' && rows;
    }, { what: 'the delivery sent' });
    const job = await mailJobOf(queue, row.id);
    await waitFor(async () => (await job?.getState()) === 'completed', { what: 'the job to complete' });
    // Run the very same job again, as a redelivery would.
    await job?.retry('completed');
    await waitFor(async () => (await reread(queue, job))?.returnvalue?.skipped === 1 || undefined, { what: 'the re-run to finish' });
    expect(sink.tries('once@example.test')).toBe(1);
  });
});
