import fc from 'fast-check';
import ICAL from 'ical.js';
import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';
import { htmlToText } from '../../shared/calendar/html';

const event = (over: Partial<IcsEvent> = {}): IcsEvent => ({
  uid: 'u1',
  sequence: 0,
  title: 'T',
  descriptionHtml: null,
  location: null,
  url: null,
  startMs: Date.parse('2026-07-14T17:00:00Z'),
  endMs: Date.parse('2026-07-14T18:00:00Z'),
  isAllDay: false,
  timezone: 'UTC',
  recurrenceRule: null,
  reminderBefore: null,
  busyType: null,
  updatedMs: Date.parse('2026-06-01T08:00:00Z'),
  ...over,
});

/** The content lines as written: each physical line, the CRLF ends removed. */
const physical = (text: string) => text.replace(/\r\n$/, '').split('\r\n');
/** RFC 5545 3.1 unfolding: a CRLF followed by one space or tab is removed. */
const unfold = (text: string) => text.replace(/\r\n[ \t]/g, '');
const line = (text: string, name: string) => unfold(text).split('\r\n').find((l) => l.startsWith(`${name}:`));
const nameLine = (name: string) => physical(buildIcs([], { uidHost: 'h', calendarName: name })).slice(3, -1);

// ical.js reads properties it does not know as raw text; X-WR-CALNAME is TEXT, as calendar
// clients read it.
(ICAL.design.icalendar.property as Record<string, { defaultType: string }>)['x-wr-calname'] = { defaultType: 'text' };

/** What ical.js (Thunderbird's parser) reads from our file. */
function readBack(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text));
  const vevent = cal.getFirstSubcomponent('vevent') as ICAL.Component;
  return {
    calName: cal.getFirstPropertyValue('x-wr-calname') as string | null,
    summary: vevent?.getFirstPropertyValue('summary') as string,
    description: vevent?.getFirstPropertyValue('description') as string | null,
    location: vevent?.getFirstPropertyValue('location') as string | null,
  };
}

/** Line breaks of any kind are one LF once read back (TEXT has only `\n`). */
const lf = (s: string) => s.replace(/\r\n|\r|\n/g, '\n');

describe('RFC 5545 TEXT escaping (3.3.11)', () => {
  it('writes the RFC example with its escaped line breaks', () => {
    const text = buildIcs([event({ title: 'Project XYZ Final Review\nConference Room - 3B\nCome Prepared.' })], { uidHost: 'h' });
    expect(line(text, 'SUMMARY')).toBe('SUMMARY:Project XYZ Final Review\\nConference Room - 3B\\nCome Prepared.');
  });

  it('escapes backslash, semicolon and comma, and every kind of line break, in the calendar name', () => {
    expect(nameLine('a\\b;c,d')).toEqual(['NAME:a\\\\b\\;c\\,d', 'X-WR-CALNAME:a\\\\b\\;c\\,d']);
    expect(nameLine('1\r\n2\r3\n4\n\n5')).toEqual(['NAME:1\\n2\\n3\\n4\\n\\n5', 'X-WR-CALNAME:1\\n2\\n3\\n4\\n\\n5']);
    // A backslash before an n stays a backslash: `\\n`, not a line break.
    expect(nameLine('C:\\new')).toEqual(['NAME:C:\\\\new', 'X-WR-CALNAME:C:\\\\new']);
  });

  it('drops the control characters TEXT does not allow from the calendar name, keeping tabs', () => {
    expect(nameLine('a\u0000b\u0007c\u0008d\u000be\u000cf\u001fg\u007fh\ti')).toEqual(['NAME:abcdefgh\ti', 'X-WR-CALNAME:abcdefgh\ti']);
    expect(nameLine('x\u0080y\u00a0z')).toEqual(['NAME:x\u0080y\u00a0z', 'X-WR-CALNAME:x\u0080y\u00a0z']);
  });

  it('escapes the same characters in titles, descriptions and locations', () => {
    const text = buildIcs([event({ title: 'a\\b;c,d\r\ne', location: 'x;y,z\rw', descriptionHtml: '<p>p;q,r\\s</p>' })], { uidHost: 'h' });
    expect(line(text, 'SUMMARY')).toBe('SUMMARY:a\\\\b\\;c\\,d\\ne');
    expect(line(text, 'LOCATION')).toBe('LOCATION:x\\;y\\,z\\nw');
    expect(line(text, 'DESCRIPTION')).toBe('DESCRIPTION:p\\;q\\,r\\\\s');
  });
});

describe('folding at 75 octets (3.1)', () => {
  it('leaves a 75-octet line whole and folds a 76-octet one', () => {
    expect(nameLine('a'.repeat(70))[0]).toBe(`NAME:${'a'.repeat(70)}`);
    expect(nameLine('a'.repeat(71)).slice(0, 2)).toEqual([`NAME:${'a'.repeat(70)}`, ' a']);
  });

  it('puts 74 octets after the leading space of each continuation line', () => {
    expect(nameLine(`${'a'.repeat(70)}${'b'.repeat(74)}c`).slice(0, 3)).toEqual([`NAME:${'a'.repeat(70)}`, ` ${'b'.repeat(74)}`, ' c']);
  });

  it('never splits a UTF-8 sequence: two, three and four octets', () => {
    expect(nameLine(`${'a'.repeat(69)}é`).slice(0, 2)).toEqual([`NAME:${'a'.repeat(69)}`, ' é']);
    expect(nameLine(`${'a'.repeat(68)}é`)[0]).toBe(`NAME:${'a'.repeat(68)}é`);
    expect(nameLine(`${'a'.repeat(68)}€`).slice(0, 2)).toEqual([`NAME:${'a'.repeat(68)}`, ' €']);
    expect(nameLine(`${'a'.repeat(67)}€`)[0]).toBe(`NAME:${'a'.repeat(67)}€`);
    expect(nameLine(`${'a'.repeat(67)}😀`).slice(0, 2)).toEqual([`NAME:${'a'.repeat(67)}`, ' 😀']);
    expect(nameLine(`${'a'.repeat(66)}😀`)[0]).toBe(`NAME:${'a'.repeat(66)}😀`);
    // Short in characters, long in octets: 19 four-octet characters are 76 octets with the name.
    expect(nameLine('😀'.repeat(18))[0]).toBe(`NAME:${'😀'.repeat(17)}`);
  });

  it('counts octets right at each UTF-8 length boundary', () => {
    for (const [ch, octets] of [
      ['\u007e', 1],
      ['\u0080', 2],
      ['\u07ff', 2],
      ['\u0800', 3],
      ['\uffff', 3],
      ['\u{10000}', 4],
      ['\u{10ffff}', 4],
    ] as const) {
      expect(nameLine(`${'a'.repeat(70 - octets)}${ch}`)[0]).toBe(`NAME:${'a'.repeat(70 - octets)}${ch}`);
      expect(nameLine(`${'a'.repeat(71 - octets)}${ch}`).slice(0, 2)).toEqual([`NAME:${'a'.repeat(71 - octets)}`, ` ${ch}`]);
      // In a longer line too: the character that ends at octet 75 stays on the first line.
      expect(nameLine(`${'a'.repeat(70 - octets)}${ch}b`).slice(0, 2)).toEqual([`NAME:${'a'.repeat(70 - octets)}${ch}`, ' b']);
      // A run of them: as many whole ones as fit after `NAME:b` (69 octets) on the first line.
      expect(Buffer.byteLength(nameLine(`b${ch.repeat(80)}`)[0])).toBe(6 + Math.floor(69 / octets) * octets);
    }
  });

  it('ends every line, the last too, with CRLF, and unfolds to the same text', () => {
    const name = `${'é😀a,'.repeat(60)}`;
    const text = buildIcs([event({ title: name })], { uidHost: 'h', calendarName: name });
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    for (const l of physical(text)) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(75);
    expect(readBack(text)).toMatchObject({ calName: name, summary: name });
  });
});

/** Text as the API takes it: any Unicode, control characters, every line break, very long. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom('\\', ';', ',', '\r', '\n', '\r\n', ':', '"', ' ', '\t', 'é', '€', '😀', 'a', '\u0007'), maxLength: 400 }),
  fc.string({ unit: 'grapheme', minLength: 100, maxLength: 2000 }),
);

describe('any text through our ICS and ical.js', () => {
  it('reads back the same title, location and calendar name (line breaks as LF; control characters dropped from the name)', () => {
    fc.assert(
      fc.property(anyText, anyText, anyText, (title, location, name) => {
        const text = buildIcs([event({ title, location })], { uidHost: 'h', calendarName: name });
        for (const l of physical(text)) {
          expect(Buffer.byteLength(l)).toBeLessThanOrEqual(75);
          // No lone CR or LF inside a line, no split surrogate pair.
          expect(l).not.toMatch(/[\r\n]/);
          expect(Buffer.from(l).toString()).toBe(l);
        }
        const back = readBack(text);
        expect(back.summary).toBe(lf(title));
        expect(back.location ?? '').toBe(lf(location));
        // eslint-disable-next-line no-control-regex
        expect(back.calName ?? '').toBe(lf(name).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ''));
      }),
      { numRuns: 150, seed: 26 },
    );
  });

  it('reads back the description as its text followed by the page link', () => {
    fc.assert(
      fc.property(anyText, (body) => {
        const html = `<p>${body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`;
        const text = buildIcs([event({ descriptionHtml: html, url: 'https://cal.example/e/u1' })], { uidHost: 'h' });
        const expected = [htmlToText(html), 'https://cal.example/e/u1'].filter(Boolean).join('\n\n');
        expect(readBack(text).description).toBe(lf(expected));
      }),
      { numRuns: 100, seed: 26 },
    );
  });
});
