import ical, { foldLines, ICalAttendee } from 'ical-generator';
import { attendeeData, buildIcs, type IcsAttendee, type IcsEvent, type IcsOptions } from '../../shared/calendar/ics';

type Attendee = IcsAttendee;

const PLACEHOLDER: Attendee = { email: 'attendee@placeholder.invalid', name: null };

// An event for ical-generator to hang attendee lines on; only their text is used.
const scratchEvent = ical().createEvent({ start: new Date(0), id: 'scratch' });

/** The ATTENDEE property exactly as buildIcs writes it (same arguments), folded. */
function attendeeText(a: Attendee, method: IcsOptions['method']): string {
  return foldLines(new ICalAttendee(attendeeData(a, method), scratchEvent).toString());
}

/**
 * The iTIP object of one fan-out for each of its recipients. Every message of a batch is
 * the same calendar but for its ATTENDEE line, so buildIcs runs once (with a stand-in
 * attendee) and each recipient's line, written by ical-generator as buildIcs would write
 * it, takes the stand-in's place: the text is what buildIcs makes for that recipient,
 * without making the whole calendar (time zone rules, folding) again for each message.
 * The jobs of one fan-out share their template (their DTSTAMP is the time of the change).
 */
export function icsPerAttendee(event: IcsEvent, opts: Omit<IcsOptions, 'attendees'>): (attendee: Attendee) => string {
  const key = JSON.stringify([event, opts]);
  let made = recent.get(key);
  if (!made) {
    made = makeTemplate(event, opts);
    recent.set(key, made);
    // A fan-out's jobs come one after another: the last few templates are all worth keeping.
    if (recent.size > 32) recent.delete(recent.keys().next().value as string);
  }
  return made;
}

const recent = new Map<string, (attendee: Attendee) => string>();

function makeTemplate(event: IcsEvent, opts: Omit<IcsOptions, 'attendees'>): (attendee: Attendee) => string {
  const whole = buildIcs([event], { ...opts, attendees: [PLACEHOLDER] });
  const stand = attendeeText(PLACEHOLDER, opts.method);
  const at = whole.indexOf(stand);
  if (at < 0) return (attendee) => buildIcs([event], { ...opts, attendees: [attendee] }); // never expected; stay correct
  const before = whole.slice(0, at);
  const after = whole.slice(at + stand.length);
  return (attendee) => before + attendeeText(attendee, opts.method) + after;
}
