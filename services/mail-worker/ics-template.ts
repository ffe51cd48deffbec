import ical, { ICalAttendee } from 'ical-generator';
import { attendeeData, buildIcs, fold, type IcsAttendee, type IcsEvent, type IcsOptions, organizerData } from '../../shared/calendar/ics';

type Attendee = IcsAttendee;

const PLACEHOLDER: Attendee = { email: 'attendee@placeholder.invalid', name: null };

// An event for ical-generator to hang attendee lines on; only their text is used.
const scratchEvent = ical().createEvent({ start: new Date(0) });

/**
 * The ATTENDEE property exactly as buildIcs writes it (same arguments), folded as buildIcs
 * folds (ical-generator's own foldLines ends the first line an octet sooner, so its text was
 * never found in the calendar and every message was made whole).
 */
function attendeeText(a: Attendee, method: IcsOptions['method']): string {
  return fold(new ICalAttendee(attendeeData(a, method), scratchEvent).toString());
}

type Organizer = NonNullable<IcsOptions['organizer']>;

/** The ORGANIZER property exactly as buildIcs writes it, folded. */
function organizerText(o: Organizer): string {
  const event = ical().createEvent({ start: new Date(0) });
  event.organizer(organizerData(o));
  const line = event
    .toString()
    .split('\r\n')
    .find((l) => l.startsWith('ORGANIZER'));
  return `${fold(line as string)}\r\n`;
}

/** The recipient of one message, and the address their calendar app answers to when it is their own. */
interface IcsRecipient extends Attendee {
  organizerEmail?: string;
}

/**
 * The iTIP object of one fan-out for each of its recipients. Every message of a batch is
 * the same calendar but for its ATTENDEE line, so buildIcs runs once (with a stand-in
 * attendee) and each recipient's line, written by ical-generator as buildIcs would write
 * it, takes the stand-in's place: the text is what buildIcs makes for that recipient,
 * without making the whole calendar (time zone rules, folding) again for each message.
 * The jobs of one fan-out share their template (their DTSTAMP is the time of the change).
 * An invitee with their own reply address gets it as the ORGANIZER's address, written the
 * same way (the organizer's name stays).
 */
export function icsPerAttendee(event: IcsEvent, opts: Omit<IcsOptions, 'attendees'>): (recipient: IcsRecipient) => string {
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

const recent = new Map<string, (recipient: IcsRecipient) => string>();

function makeTemplate(event: IcsEvent, opts: Omit<IcsOptions, 'attendees'>): (recipient: IcsRecipient) => string {
  const whole = buildIcs([event], { ...opts, attendees: [PLACEHOLDER] });
  const [beforeAttendee, after] = splitAt(whole, attendeeText(PLACEHOLDER, opts.method));
  const organizer = opts.organizer;
  // attendeeText reads a recipient's address, name and answer, not their reply address.
  if (!organizer) return (recipient) => beforeAttendee + attendeeText(recipient, opts.method) + after;
  const standOrganizer = organizerText(organizer);
  const [head, middle] = splitAt(beforeAttendee, standOrganizer);
  return ({ organizerEmail, ...attendee }) =>
    head + (organizerEmail ? organizerText({ ...organizer, email: organizerEmail }) : standOrganizer) + middle + attendeeText(attendee, opts.method) + after;
}

/**
 * The text before and after the one place `line` is written. buildIcs writes the ORGANIZER
 * line once, then the ATTENDEE line once, exactly as attendeeText and organizerText write
 * them (same writer, same fold; test/mutation/ics-template.test.ts compares the messages
 * with buildIcs byte for byte), so a line not found means ical-generator writes them
 * otherwise now: that fails loudly rather than send a wrong or silently slower message.
 */
export function splitAt(text: string, line: string): [string, string] {
  const at = text.indexOf(line);
  if (at === -1) throw new Error(`ICS template: ${line.slice(0, line.search(/[;:]/))} not found where buildIcs writes it`);
  return [text.slice(0, at), text.slice(at + line.length)];
}
