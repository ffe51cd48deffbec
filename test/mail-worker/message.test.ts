import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import ical from 'node-ical';
import type { EventSnapshot, MailJob, MailKind } from '../../shared/queues/mail.job';
import { messageFactory } from '../../services/mail-worker/message.builder';
import { layout } from '../../services/mail-worker/message.layout';
import { classifySendError } from '../../services/mail-worker/smtp-errors';

const job = (kind: MailKind, overrides: Partial<EventSnapshot> = {}): MailJob => ({
  eventId: 7,
  kind,
  messages: [{ deliveryId: 42, to: { email: 'ann@example.test', name: 'Ann "the <best>"' } }],
  event: {
    uid: 'AbCdEfGh12345678',
    uidHost: 'cal.example.com',
    sequence: 4,
    title: 'Launch <party> & "friends"',
    descriptionHtml: '<p>Bring <strong>snacks</strong></p>',
    location: 'HQ\nRoof',
    url: 'https://cal.example.com/e/AbCdEfGh12345678',
    startMs: Date.parse('2026-12-03T18:00:00Z'),
    endMs: Date.parse('2026-12-03T20:00:00Z'),
    isAllDay: false,
    timezone: 'Europe/Berlin',
    recurrenceRule: null,
    reminderBefore: 30,
    busyType: 'busy',
    updatedMs: Date.parse('2026-11-01T00:00:00Z'),
    createdMs: Date.parse('2026-10-01T00:00:00Z'),
    stampMs: Date.parse('2026-11-19T08:30:00Z'),
    ...overrides,
  },
});
const from = { header: 'Team Calendar <calendar@example.com>', mailbox: { name: 'Team Calendar', email: 'calendar@example.com' } };
const NOW = Date.parse('2026-11-20T12:00:00Z');

async function compose(j: MailJob, message = j.messages[0]) {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const build = await messageFactory(j, from, NOW);
  const info = await transport.sendMail(build(message));
  const raw = (info.message as Buffer).toString('utf8');
  const parsed = await simpleParser(raw);
  const calendar = parsed.attachments.find((a) => a.contentType === 'text/calendar')?.content.toString('utf8') ?? '';
  const vevent = Object.values(ical.sync.parseICS(calendar)).find((c) => c?.type === 'VEVENT') as ical.VEvent;
  return { raw, parsed, calendar, vevent };
}

describe('buildMessage', () => {
  it('makes an invitation: escaped HTML, text, and an iTIP REQUEST a real parser reads back', async () => {
    const { raw, parsed, calendar, vevent } = await compose(job('invitation'));
    expect(parsed.subject).toBe('Invitation: Launch <party> & "friends" @ Thu Dec 3, 2026 7:00 PM - 9:00 PM (CET)');
    expect(parsed.messageId).toBe('<d42.invitation.4.evt_AbCdEfGh12345678@cal.example.com>');
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect(parsed.html).toContain('Launch &lt;party&gt; &amp; &quot;friends&quot;');
    expect(parsed.html).not.toContain('<party>');
    expect(parsed.html).toContain('<strong>snacks</strong>');
    expect(parsed.html).toContain('HQ<br>Roof');
    // An address links to a map search; the When carries the zone and its offset.
    expect(parsed.html).toContain('href="https://www.openstreetmap.org/search?query=HQ%2C%20Roof"');
    expect(parsed.text).toContain('When: Thu 3 Dec 2026, 19:00–21:00 (Europe/Berlin, UTC+01:00)');
    expect(parsed.text).toContain('Add to calendar:\n  Apple: https://cal.example.com/e/AbCdEfGh12345678/apple\n');
    expect(parsed.to).toMatchObject({ value: [{ address: 'ann@example.test', name: 'Ann "the <best>"' }] });
    expect(parsed.text).toContain('You are invited to:');
    expect(parsed.text).toContain('Bring snacks');
    // RFC 6047: the calendar part is an alternative of the bodies, with its method; also attached as a file.
    expect(raw).toMatch(/Content-Type: multipart\/alternative;[\s\S]*Content-Type: text\/calendar; charset=utf-8; method=REQUEST/);
    expect(parsed.attachments.map((a) => [a.contentType, a.filename])).toEqual([
      ['text/calendar', undefined],
      ['application/ics', 'invite.ics'],
    ]);
    expect(calendar).toMatch(/^METHOD:REQUEST\r$/m);
    expect(vevent.uid).toBe('evt_AbCdEfGh12345678@cal.example.com');
    expect(Number(vevent.sequence)).toBe(4);
    expect(vevent.start.toISOString()).toBe('2026-12-03T18:00:00.000Z');
    expect((vevent.start as { tz?: string }).tz).toBe('Europe/Berlin');
    expect(vevent.summary).toBe('Launch <party> & "friends"');
    // DTSTAMP: when the change was made (the fan-out's time); Date: when this message was sent.
    expect(vevent.dtstamp.toISOString()).toBe('2026-11-19T08:30:00.000Z');
    expect(parsed.date?.toISOString()).toBe('2026-11-20T12:00:00.000Z');
    expect(calendar).toContain('VALARM');
  });

  it('makes a cancellation without the event page or a reminder', async () => {
    const { parsed, calendar, vevent } = await compose(job('cancellation'));
    expect(parsed.subject?.startsWith('Cancelled: ')).toBe(true);
    expect(calendar).toMatch(/^METHOD:CANCEL\r$/m);
    expect(vevent.status).toBe('CANCELLED');
    expect(calendar).not.toContain('VALARM');
    expect(calendar).not.toContain('/e/AbCdEfGh12345678');
    expect(parsed.text).not.toContain('Event page');
    expect(parsed.attachments.map((a) => a.filename)).toContain('cancel.ics');
    expect(calendar.replace(/\r\n /g, '')).toContain('RSVP=FALSE');
  });

  it("gives each recipient of a job the same calendar but for their own ATTENDEE line", async () => {
    const j = job('invitation');
    const names = [{ email: 'bo@example.test', name: null }, { email: 'zoë@example.test', name: 'Zoë, "Z" Müller-Lüdenscheidt; the longest name in this test' }];
    for (const [i, to] of names.entries()) {
      const { calendar, vevent, parsed } = await compose(j, { deliveryId: 100 + i, to });
      const attendees = ([] as unknown[]).concat(vevent.attendee ?? []);
      expect(attendees).toHaveLength(1);
      // A double quote cannot stand in a parameter value (RFC 5545 §3.1): it becomes a single one.
      if (to.name) expect(calendar.replace(/\r\n /g, '')).toContain(`CN="Zoë, 'Z' Müller-Lüdenscheidt; the longest name in this test":MAILTO:zoë@example.test`);
      expect(calendar.replace(/\r\n /g, '')).toContain(`MAILTO:${to.email}`);
      expect(parsed.messageId).toBe(`<d${100 + i}.invitation.4.evt_AbCdEfGh12345678@cal.example.com>`);
      for (const line of calendar.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    }
  });

  it('writes an update as a REQUEST that asks for a reply', async () => {
    const { parsed, calendar } = await compose(job('update', { sequence: 9 }));
    expect(parsed.subject?.startsWith('Updated invitation: ')).toBe(true);
    expect(calendar).toMatch(/^SEQUENCE:9\r$/m);
    expect(calendar.replace(/\r\n /g, '')).toContain('RSVP=TRUE');
    expect(parsed.text).toContain('Event page: https://cal.example.com/e/AbCdEfGh12345678');
  });

  it("gives each recipient their own answer buttons and unsubscribe link, in the bodies and the headers", async () => {
    const j = job('reminder');
    const own = (n: number) => ({
      answer: { yes: `https://cal.example.com/a/${n}/yes`, maybe: `https://cal.example.com/a/${n}/maybe`, no: `https://cal.example.com/a/${n}/no` },
      unsubscribe: `https://cal.example.com/u/${n}`,
    });
    j.messages = [
      { deliveryId: 1, to: { email: 'a@example.test', name: null }, links: own(1) },
      { deliveryId: 2, to: { email: 'b@example.test', name: null }, links: own(2) },
      { deliveryId: 3, to: { email: 'c@example.test', name: null } },
    ];
    const [a, b, c] = await Promise.all(j.messages.map((m) => compose(j, m)));
    expect(a.parsed.subject).toBe('Reminder: Launch <party> & "friends" @ Thu Dec 3, 2026 7:00 PM - 9:00 PM (CET)');
    expect(a.parsed.text).toMatch(/^Coming up:\n/);
    expect(a.parsed.attachments).toEqual([]);
    for (const [n, m] of [[1, a], [2, b]] as const) {
      expect(m.parsed.html).toContain(`href="https://cal.example.com/a/${n}/yes"`);
      expect(m.parsed.html).toContain(`href="https://cal.example.com/u/${n}"`);
      expect(m.parsed.text).toContain(`  Maybe: https://cal.example.com/a/${n}/maybe`);
      expect(m.parsed.text).toContain(`Stop reminders for this event: https://cal.example.com/u/${n}`);
      expect(m.raw).toContain(`\r\nList-Unsubscribe: <https://cal.example.com/u/${n}>\r\n`);
      expect(m.raw).toContain('\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n');
    }
    expect(a.parsed.html).not.toContain('/a/2/');
    expect(c.parsed.html).not.toContain('Will you attend?');
    expect(c.parsed.text).not.toContain('Stop reminders');
    expect(c.raw).not.toContain('List-Unsubscribe');
  });

  it('compiles the layout once, however many jobs it fills', async () => {
    const first = layout('en');
    await messageFactory(job('invitation'), from, NOW);
    await messageFactory(job('cancellation'), from, NOW);
    expect(layout('en')).toBe(first);
  });
});

describe('classifySendError', () => {
  it.each([
    ['a 5xx reply', { code: 'EENVELOPE', responseCode: 550, response: '550 5.1.1 unknown user' }, true, '550 5.1.1 unknown user'],
    ['a 5xx reply to DATA', { code: 'EMESSAGE', responseCode: 554, response: '554 5.7.1 rejected as spam' }, true, '554 5.7.1 rejected as spam'],
    ['a 4xx reply', { code: 'EENVELOPE', responseCode: 451, response: '451 4.7.1 greylisted' }, false, '451 4.7.1 greylisted'],
    ['a refused connection', { code: 'ESOCKET', message: 'connect ECONNREFUSED 127.0.0.1:2525' }, false, 'connect ECONNREFUSED 127.0.0.1:2525'],
    ['a timeout', { code: 'ETIMEDOUT', message: 'Greeting never received' }, false, 'Greeting never received'],
    ['a rejected login (configuration, not the message)', { code: 'EAUTH', responseCode: 535, response: '535 5.7.8 bad credentials' }, false, '535 5.7.8 bad credentials'],
    ['an address nodemailer cannot use', { code: 'EENVELOPE', message: 'No recipients defined' }, true, 'No recipients defined'],
    ['anything else', new Error('something odd'), false, 'something odd'],
  ])('%s', (_name, err, permanent, reply) => {
    expect(classifySendError(err)).toEqual({ permanent, reply });
  });
});
