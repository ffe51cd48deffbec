import fc from 'fast-check';
import ICAL from 'ical.js';
import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';
import { icsPerAttendee, splitAt } from '../../services/mail-worker/ics-template';

/*
 * The iTIP object each invitee's email carries (RFC 5546 over RFC 5545), as their calendar
 * app reads it: parsed by ical.js (Thunderbird's parser), not by our code. A REQUEST asks
 * the invitee for an answer (RSVP=TRUE, PARTSTAT left at NEEDS-ACTION) unless they have
 * given one (PARTSTAT their answer); a CANCEL asks nothing. Each message names its own
 * recipient alone as ATTENDEE, and the organizer (or the invitee's own reply address, under
 * the organizer's name) as ORGANIZER. The template must write what buildIcs writes for
 * that recipient, byte for byte, without building the calendar again for each.
 */

const at = (iso: string) => Date.parse(iso);
let serial = 0;
const event = (over: Partial<IcsEvent> = {}): IcsEvent => ({
  uid: `tpl${++serial}`,
  sequence: 2,
  title: 'Quarterly planning',
  descriptionHtml: '<p>Agenda: <b>budget</b>, hiring</p>',
  location: 'Room 4B',
  url: 'https://cal.example/e/x1',
  startMs: at('2026-03-09T14:00:00Z'),
  endMs: at('2026-03-09T15:00:00Z'),
  isAllDay: false,
  timezone: 'America/New_York',
  recurrenceRule: 'FREQ=WEEKLY;BYDAY=MO',
  reminderBefore: 15,
  busyType: 'busy',
  updatedMs: at('2026-03-01T08:00:00Z'),
  ...over,
});
const ORGANIZER = { name: 'Ada Organizer', email: 'ada@org.example' };
const STAMP = at('2026-03-02T09:30:00Z');

const veventOf = (text: string) => new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent') as ICAL.Component;

/** What a calendar app reads of the message: method, organizer and attendees with their parameters. */
function itip(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const vevent = veventOf(text);
  const organizer = vevent.getFirstProperty('organizer');
  return {
    method: calendar.getFirstPropertyValue('method'),
    organizer: organizer && { value: organizer.getFirstValue(), cn: organizer.getParameter('cn') ?? null },
    attendees: vevent.getAllProperties('attendee').map((p) => ({
      value: String(p.getFirstValue()).toLowerCase(),
      cn: p.getParameter('cn') ?? null,
      partstat: p.getParameter('partstat') ?? 'NEEDS-ACTION',
      rsvp: p.getParameter('rsvp') ?? 'FALSE',
    })),
  };
}

describe('each invitee’s iTIP object', () => {
  it('asks for an answer in a REQUEST to someone who has not answered (RFC 5546 3.2.2)', () => {
    const e = event();
    const text = icsPerAttendee(e, { uidHost: 'cal.example', method: 'REQUEST', organizer: ORGANIZER, stampMs: STAMP })({ email: 'bo@guest.example', name: 'Bo Guest' });
    expect(itip(text)).toEqual({
      method: 'REQUEST',
      organizer: { value: 'mailto:ada@org.example', cn: 'Ada Organizer' },
      attendees: [{ value: 'mailto:bo@guest.example', cn: 'Bo Guest', partstat: 'NEEDS-ACTION', rsvp: 'TRUE' }],
    });
    const vevent = veventOf(text);
    expect(vevent.getFirstPropertyValue('uid')).toBe(`evt_${e.uid}@cal.example`);
    expect(vevent.getFirstPropertyValue('sequence')).toBe(2);
    expect((vevent.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().toISOString()).toBe('2026-03-02T09:30:00.000Z');
    expect(text).not.toContain('placeholder');
  });

  it.each(['ACCEPTED', 'TENTATIVE', 'DECLINED'] as const)('carries the answer %s already given, asking for none', (answer) => {
    const text = icsPerAttendee(event(), { uidHost: 'cal.example', method: 'REQUEST', organizer: ORGANIZER, stampMs: STAMP })({ email: 'bo@guest.example', name: null, answer });
    expect(itip(text).attendees).toEqual([{ value: 'mailto:bo@guest.example', cn: null, partstat: answer, rsvp: 'FALSE' }]);
  });

  it('asks nothing in a CANCEL (RFC 5546 3.2.5), and marks a cancelled event so', () => {
    const cancel = icsPerAttendee(event({ cancelled: true }), { uidHost: 'cal.example', method: 'CANCEL', organizer: ORGANIZER, stampMs: STAMP });
    const text = cancel({ email: 'bo@guest.example', name: 'Bo' });
    expect(itip(text)).toEqual({
      method: 'CANCEL',
      organizer: { value: 'mailto:ada@org.example', cn: 'Ada Organizer' },
      attendees: [{ value: 'mailto:bo@guest.example', cn: 'Bo', partstat: 'NEEDS-ACTION', rsvp: 'FALSE' }],
    });
    expect(veventOf(text).getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(itip(cancel({ email: 'cy@guest.example', answer: 'ACCEPTED' })).attendees).toEqual([{ value: 'mailto:cy@guest.example', cn: null, partstat: 'ACCEPTED', rsvp: 'FALSE' }]);
  });

  it("names the invitee's own reply address as ORGANIZER when they have one, under the organizer's name", () => {
    const make = icsPerAttendee(event(), { uidHost: 'cal.example', method: 'REQUEST', organizer: ORGANIZER, stampMs: STAMP });
    const own = make({ email: 'bo@guest.example', organizerEmail: 'reply+bo.k3y@mail.cal.example' });
    expect(itip(own).organizer).toEqual({ value: 'mailto:reply+bo.k3y@mail.cal.example', cn: 'Ada Organizer' });
    // The next recipient without one gets the organizer's address again.
    expect(itip(make({ email: 'cy@guest.example' })).organizer).toEqual({ value: 'mailto:ada@org.example', cn: 'Ada Organizer' });
    expect(own.match(/^ORGANIZER/gm)).toHaveLength(1);
  });

  it('names an organizer without a name by their address (a bare MAIL_FROM)', () => {
    const make = icsPerAttendee(event(), { uidHost: 'cal.example', method: 'REQUEST', organizer: { name: '', email: 'no-reply@cal.example' }, stampMs: STAMP });
    expect(itip(make({ email: 'bo@guest.example' })).organizer).toEqual({ value: 'mailto:no-reply@cal.example', cn: 'no-reply@cal.example' });
    // Their reply address, as buildIcs would name an organizer of that address without a name.
    expect(itip(make({ email: 'bo@guest.example', organizerEmail: 'reply+bo@mail.cal.example' })).organizer).toEqual({ value: 'mailto:reply+bo@mail.cal.example', cn: 'reply+bo@mail.cal.example' });
  });

  it('has no ORGANIZER without one, and never a reply address in its place', () => {
    const make = icsPerAttendee(event(), { uidHost: 'cal.example', method: 'REQUEST', stampMs: STAMP });
    for (const text of [make({ email: 'bo@guest.example' }), make({ email: 'bo@guest.example', organizerEmail: 'reply+x@mail.cal.example' })]) {
      expect(itip(text).organizer).toBeNull();
      expect(itip(text).attendees).toEqual([{ value: 'mailto:bo@guest.example', cn: null, partstat: 'NEEDS-ACTION', rsvp: 'TRUE' }]);
      expect(text).not.toContain('reply+x');
    }
  });

  it('is byte for byte what buildIcs writes for that recipient alone, whatever their name and address', () => {
    const name = fc.option(fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constantFrom('Zoë Ünal', '山田 太郎', '👩‍💻 Dev', 'O\'Brien; Jr., "Bo"')), { nil: null });
    const email = fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.example', `${'x'.repeat(70)}@long.example`));
    const answer = fc.constantFrom(undefined, 'ACCEPTED', 'TENTATIVE', 'DECLINED');
    const organizerName = fc.oneof(fc.constant(ORGANIZER.name), fc.string({ unit: 'grapheme', maxLength: 70 }).filter((n) => !n.includes('"')));
    fc.assert(
      fc.property(fc.constantFrom('REQUEST', 'CANCEL'), fc.option(organizerName, { nil: undefined }), name, email, answer, fc.option(email, { nil: undefined }), (method, orgName, n, mail, ans, reply) => {
        const e = event({ uid: 'fixed', title: 'T' });
        const organizer = orgName === undefined ? undefined : { name: orgName, email: ORGANIZER.email };
        const opts = { uidHost: 'cal.example', method, organizer, stampMs: STAMP } as const;
        const text = icsPerAttendee(e, opts)({ email: mail, name: n, answer: ans, organizerEmail: reply });
        const expected = buildIcs([e], { ...opts, organizer: organizer && reply ? { ...organizer, email: reply } : organizer, attendees: [{ email: mail, name: n, answer: ans }] });
        expect(text).toBe(expected);
        // RFC 5545 3.1: no line longer than 75 octets.
        expect(text.split('\r\n').filter((l) => Buffer.byteLength(l) > 75)).toEqual([]);
      }),
      { seed: 20_261_127, numRuns: 150 },
    );
  });

  it('is made once per fan-out: one template for the same event and options, the last 32 kept', () => {
    const opts = { uidHost: 'cal.example', method: 'REQUEST', organizer: ORGANIZER, stampMs: STAMP } as const;
    const events = Array.from({ length: 33 }, () => event());
    const first = icsPerAttendee(events[0], opts);
    expect(icsPerAttendee({ ...events[0] }, { ...opts })).toBe(first);
    expect(icsPerAttendee(events[0], { ...opts, stampMs: STAMP + 1 })).not.toBe(first);
    const second = icsPerAttendee(events[1], opts);
    for (const e of events.slice(2)) icsPerAttendee(e, opts);
    // 33 templates made since the first: it is gone, the second is not.
    expect(icsPerAttendee(events[1], opts)).toBe(second);
    expect(icsPerAttendee(events[0], opts)).not.toBe(first);
  });
});

describe('splitAt', () => {
  it('is the text around the one place the line is written, and fails loudly where it is not', () => {
    const text = 'BEGIN:VEVENT\r\nORGANIZER;CN=A:mailto:a@x\r\nATTENDEE:mailto:b@x\r\nEND:VEVENT\r\n';
    expect(splitAt(text, 'ATTENDEE:mailto:b@x\r\n')).toEqual(['BEGIN:VEVENT\r\nORGANIZER;CN=A:mailto:a@x\r\n', 'END:VEVENT\r\n']);
    expect(splitAt(text, 'BEGIN:VEVENT\r\n')).toEqual(['', text.slice(14)]);
    expect(() => splitAt(text, 'ATTENDEE;RSVP=TRUE:mailto:b@x\r\n')).toThrow(new Error('ICS template: ATTENDEE not found where buildIcs writes it'));
    expect(() => splitAt(text, 'ORGANIZER:mailto:c@x\r\n')).toThrow(new Error('ICS template: ORGANIZER not found where buildIcs writes it'));
  });
});
