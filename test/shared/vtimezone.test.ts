import ical from 'node-ical';
import { rrulestr } from 'rrule';
import { buildIcs } from '../../shared/calendar/ics';
import { zoneOffsetMinutes } from '../../shared/calendar/time-zones';
import { vtimezoneLines } from '../../shared/calendar/vtimezone';

/**
 * Reads a VTIMEZONE the way RFC 5545 §3.6.5 defines it: each observance starts at its
 * DTSTART, each RRULE occurrence and each RDATE (local times in the offset it leaves); the
 * offset at an instant is the TZOFFSETTO of the latest onset before it.
 */
function offsetsOf(lines: string[], untilYear: number): (ms: number) => number | null {
  const onsets: { at: number; to: number }[] = [];
  const minutes = (v: string) => (v[0] === '-' ? -1 : 1) * (Number(v.slice(1, 3)) * 60 + Number(v.slice(3, 5)));
  const local = (v: string) => Date.UTC(+v.slice(0, 4), +v.slice(4, 6) - 1, +v.slice(6, 8), +v.slice(9, 11), +v.slice(11, 13), +v.slice(13, 15));
  let props: Record<string, string> | null = null;
  for (const line of lines) {
    if (/^BEGIN:(STANDARD|DAYLIGHT)$/.test(line)) props = {};
    else if (/^END:(STANDARD|DAYLIGHT)$/.test(line) && props) {
      const from = minutes(props.TZOFFSETFROM);
      const to = minutes(props.TZOFFSETTO);
      const starts = [local(props.DTSTART)];
      if (props.RRULE) {
        const rule = rrulestr(`RRULE:${props.RRULE}`, { dtstart: new Date(starts[0]) });
        starts.push(...rule.between(new Date(starts[0]), new Date(Date.UTC(untilYear + 1, 0, 1)), false).map((d) => d.getTime()));
      }
      if (props.RDATE) starts.push(...props.RDATE.split(',').map(local));
      for (const s of starts) onsets.push({ at: s - from * 60_000, to });
      props = null;
    } else if (props) {
      const i = line.indexOf(':');
      props[line.slice(0, i)] = line.slice(i + 1);
    }
  }
  onsets.sort((a, b) => a.at - b.at);
  return (ms) => {
    let offset: number | null = null;
    for (const o of onsets) if (o.at <= ms) offset = o.to;
    return offset;
  };
}

const YEAR = new Date().getUTCFullYear();

/** Noon every week of the span and the minutes either side of every real change. */
function instantsToCheck(apiOffset: (ms: number) => number, fromYear: number, toYear: number): number[] {
  const instants: number[] = [];
  for (let t = Date.UTC(fromYear, 0, 1, 12); t < Date.UTC(toYear + 1, 0, 1); t += 7 * 86_400_000) {
    instants.push(t);
    let [lo, hi] = [t - 7 * 86_400_000, t];
    if (lo < Date.UTC(fromYear, 0, 1) || apiOffset(lo) === apiOffset(hi)) continue;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (apiOffset(mid) === apiOffset(lo)) lo = mid;
      else hi = mid;
    }
    instants.push(lo, hi);
  }
  return instants;
}

describe('VTIMEZONE from the runtime time-zone data', () => {
  it.each([
    ['from last year to four years ahead', YEAR - 1, YEAR + 4],
    ['in 2005-2008, across the rule changes of those years', 2005, 2008],
  ])('gives every IANA zone the offsets the API prints %s, on both sides of each change', (_name, fromYear, toYear) => {
    const wrong: string[] = [];
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const apiOffset = (ms: number) => zoneOffsetMinutes(zone, ms); // what the API's dates use
      const lines = vtimezoneLines(zone, { from: fromYear, to: toYear });
      expect(lines[0]).toBe('BEGIN:VTIMEZONE');
      const offsetAt = offsetsOf(lines, toYear);
      for (const t of instantsToCheck(apiOffset, fromYear, toYear)) {
        const want = apiOffset(t);
        if (offsetAt(t) !== want) {
          wrong.push(`${zone} at ${new Date(t).toISOString()}: ${offsetAt(t)} instead of ${want}`);
          break;
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it('uses the current rules: no daylight time where it was abolished, a yearly rule where it is kept', () => {
    const span = { from: YEAR, to: YEAR };
    const mexico = vtimezoneLines('America/Mexico_City', span).join('\n');
    expect(mexico).not.toContain('DAYLIGHT');
    expect(mexico).toContain('TZOFFSETTO:-0600');
    // The form Outlook reads: one STANDARD and one DAYLIGHT observance, yearly from 1970.
    const berlin = vtimezoneLines('Europe/Berlin', span).join('\n');
    expect(berlin.match(/BEGIN:(STANDARD|DAYLIGHT)/g)).toHaveLength(2);
    expect(berlin).toContain('BEGIN:DAYLIGHT\nTZNAME:CEST\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nDTSTART:19700329T020000\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU');
    expect(berlin).toContain('BEGIN:STANDARD\nTZNAME:CET\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nDTSTART:19701025T030000\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU');
    // "The Friday before the last Sunday of March" (Israel): a weekday in a window of days.
    expect(vtimezoneLines('Asia/Jerusalem', span).join('\n')).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=FR;BYMONTHDAY=23,24,25,26,27,28,29');
  });

  it('describes the rules of the years the file covers: New York in 2006, before the 2007 change', () => {
    const text = vtimezoneLines('America/New_York', { from: 2006, to: 2006 }).join('\n');
    // April's first Sunday and October's last in 2005 and 2006, then the rules since 2007.
    for (const start of ['20050403T020000', '20060402T020000']) expect(text).toContain(`TZOFFSETFROM:-0500\nTZOFFSETTO:-0400\nDTSTART:${start}\n`);
    for (const start of ['20051030T020000', '20061029T020000']) expect(text).toContain(`TZOFFSETFROM:-0400\nTZOFFSETTO:-0500\nDTSTART:${start}\n`);
    expect(text).toContain('DTSTART:20070311T020000\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\n');
    expect(text).toContain('DTSTART:20071104T020000\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\n');
    // Over 1990-2037: the rule of 1987-2006 as a yearly RRULE with a COUNT.
    const long = vtimezoneLines('America/New_York', { from: 1990, to: 2037 }).join('\n');
    expect(long).toContain('DTSTART:19890402T020000\nRRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU;COUNT=18\n');
  });

  it('writes no RDATE and no UNTIL, only forms every parser reads alike', () => {
    // ical.js reads one date of an RDATE list and skips DTSTART beside RDATEs; dateutil
    // (python-icalendar) refuses an UNTIL in UTC beside a local DTSTART.
    for (const zone of ['Africa/Cairo', 'Africa/Casablanca', 'America/New_York', 'Asia/Gaza', 'America/Sao_Paulo', 'Europe/Moscow']) {
      for (const span of [{ from: 2027, to: 2027 }, { from: 1990, to: 2037 }]) {
        const lines = vtimezoneLines(zone, span);
        expect(lines.filter((line) => line.startsWith('RDATE') || line.includes('UNTIL='))).toEqual([]);
      }
    }
    // Cairo from 2030 on: DST ends on the Friday after October's last Thursday, some years
    // in November: those years are observances of their own.
    const cairo = vtimezoneLines('Africa/Cairo', { from: 2030, to: 2030 }).join('\n');
    expect(cairo).toContain('TZOFFSETFROM:+0300\nTZOFFSETTO:+0200\nDTSTART:20301101T000000\nEND:STANDARD');
  });

  it('is what an .ics carries, and a real parser places a Mexico City event at the API offset', () => {
    const text = buildIcs(
      [
        {
          uid: 'AbCdEfGh12345678',
          sequence: 0,
          title: 'Summer meeting',
          descriptionHtml: null,
          location: null,
          url: null,
          startMs: Date.parse(`${YEAR + 1}-07-15T16:00:00Z`),
          endMs: Date.parse(`${YEAR + 1}-07-15T17:00:00Z`),
          isAllDay: false,
          timezone: 'America/Mexico_City',
          recurrenceRule: null,
          reminderBefore: null,
          busyType: null,
          updatedMs: Date.parse(`${YEAR}-06-01T08:00:00Z`),
        },
      ],
      { uidHost: 'h' },
    );
    expect(text).toContain(`DTSTART;TZID=America/Mexico_City:${YEAR + 1}0715T100000`);
    expect(text).toContain(vtimezoneLines('America/Mexico_City', { from: YEAR + 1, to: YEAR + 1 }).join('\r\n'));
    const [event] = Object.values(ical.sync.parseICS(text)).filter((c) => c?.type === 'VEVENT') as ical.VEvent[];
    expect(event.start.toISOString()).toBe(`${YEAR + 1}-07-15T16:00:00.000Z`);
  });
});
