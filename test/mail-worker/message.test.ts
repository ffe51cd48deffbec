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

  it('compiles the layout once per language, however many jobs it fills', async () => {
    const first = layout('en');
    await messageFactory(job('invitation'), from, NOW);
    await messageFactory(job('cancellation'), from, NOW);
    expect(layout('en')).toBe(first);
    const german = layout('de');
    await messageFactory({ ...job('invitation'), locale: 'de' }, from, NOW);
    expect(layout('de')).toBe(german);
    expect(german).not.toBe(first);
  });
});

describe('languages', () => {
  const LINKS = { answer: { yes: 'https://cal.example.com/a/yes', maybe: 'https://cal.example.com/a/maybe', no: 'https://cal.example.com/a/no' }, unsubscribe: 'https://cal.example.com/u/1' };
  const inLanguage = (j: MailJob, locale: MailJob['locale']): MailJob => ({ ...j, locale, messages: j.messages.map((m) => ({ ...m, links: LINKS })) });
  // Dates as Intl writes them in the language: worked out here, not by the service's code.
  const start = Date.parse('2026-12-03T18:00:00Z');
  const end = Date.parse('2026-12-03T20:00:00Z');
  const timed = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'Europe/Berlin' } as const;
  const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

  it('writes a German job in German: subject, both bodies, the HTML\'s lang, dates by Intl', async () => {
    const { parsed } = await compose(inLanguage(job('invitation'), 'de'));
    const withZone = new Intl.DateTimeFormat('de', { ...timed, timeZoneName: 'short' }).formatRange(start, end);
    const when = new Intl.DateTimeFormat('de', timed).formatRange(start, end);
    expect(parsed.subject).toBe(`Einladung: Launch <party> & "friends" @ ${withZone}`);

    const text = parsed.text as string;
    expect(text).toMatch(/^Sie sind eingeladen:\n\nLaunch <party> & "friends"\n\nWann: /);
    expect(text).toContain(`Wann: ${when} (Europe/Berlin, UTC+01:00)\nWo: HQ\n  Roof\n  Karte: https://www.openstreetmap.org/search?query=HQ%2C%20Roof\n`);
    expect(text).toContain('Kommen Sie?\n  Ja: https://cal.example.com/a/yes\n  Vielleicht: https://cal.example.com/a/maybe\n  Nein: https://cal.example.com/a/no\n');
    expect(text).toContain('Veranstaltungsseite: https://cal.example.com/e/AbCdEfGh12345678\n');
    expect(text).toContain('Zum Kalender hinzufügen:\n  Apple: https://cal.example.com/e/AbCdEfGh12345678/apple\n');
    expect(text).toContain('  iCal-Datei: https://cal.example.com/e/AbCdEfGh12345678/ics\n');
    expect(text).toContain('Die angehängte Einladung trägt die Veranstaltung in Ihren Kalender ein.');
    // No organizer in the job: the footer names the organizer in German too.
    expect(text).toContain('Sie erhalten diese E-Mail, weil der Veranstalter Sie zu Launch <party> & "friends" eingeladen hat.');
    expect(text).toContain('Keine E-Mails mehr von diesem Veranstalter: https://cal.example.com/u/1');

    const html = parsed.html as string;
    expect(html).toMatch(/^<!doctype html>\s*<html lang="de"/i);
    for (const words of ['Sie sind eingeladen:', '>Wann</th>', '>Wo</th>', 'Kommen Sie?', '>Ja</a>', '>Vielleicht</a>', '>Nein</a>', '>Veranstaltungsseite öffnen</a>', 'Zum Kalender hinzufügen', '>Apple</a>', '>iCal-Datei</a>', '>Keine E-Mails mehr von diesem Veranstalter</a>']) {
      expect([words, html.includes(words)]).toEqual([words, true]);
    }
    expect(html).toContain(`${escaped(when)} (Europe/Berlin, UTC+01:00)`);
    for (const english of ['When', 'Where', 'Will you attend?', 'Open the event page', 'Add to calendar', 'iCal file', 'You received this', 'Stop reminders']) {
      expect([english, html.includes(english) || text.includes(english)]).toEqual([english, false]);
    }
  });

  it("writes an all-day event's days in UTC, with the language's \"all day\", and a repeating one's rule in the language", async () => {
    const days = { isAllDay: true, startMs: Date.parse('2026-12-24T00:00:00Z'), endMs: Date.parse('2026-12-26T00:00:00Z'), timezone: 'Pacific/Honolulu', recurrenceRule: 'FREQ=YEARLY' };
    const { parsed } = await compose(inLanguage(job('update', days), 'fr'));
    const range = new Intl.DateTimeFormat('fr', { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).formatRange(days.startMs, days.endMs);
    expect(parsed.subject).toBe(`Invitation mise à jour\u00a0: Launch <party> & "friends" @ ${range} (toute la journée)`);
    expect(parsed.text).toContain(`Quand\u00a0: ${range} (toute la journée)\n`);
    expect(parsed.text).toMatch(/^Répétition\u00a0: tous les ans$/m);
    expect(parsed.html).toMatch(/<html lang="fr"/);
  });

  it('writes a job without a language in English, byte for byte as one in English', async () => {
    const j = inLanguage(job('reminder'), undefined);
    const [none, en] = await Promise.all([compose(j), compose({ ...j, locale: 'en' })]);
    expect([none.parsed.subject, none.parsed.text, none.parsed.html]).toEqual([en.parsed.subject, en.parsed.text, en.parsed.html]);
    expect(none.parsed.subject).toBe('Reminder: Launch <party> & "friends" @ Thu Dec 3, 2026 7:00 PM - 9:00 PM (CET)');
    expect(none.parsed.html).toMatch(/<html lang="en"/);
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
