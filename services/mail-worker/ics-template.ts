import ical, { ICalAttendee } from 'ical-generator';
import { attendeeData, buildIcs, fold, type IcsAttendee, type IcsEvent, type IcsOptions, organizerData } from '../../shared/calendar/ics';

type Attendee = IcsAttendee;

const PLACEHOLDER: Attendee = { email: 'attendee@placeholder.invalid', name: null };

// An event for ical-generator to hang attendee lines on; only their text is used.
const scratchEvent = ical().createEvent({ start: new Date(0), id: 'scratch' });

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
  const event = ical().createEvent({ start: new Date(0), id: 'scratch' });
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
  const stand = attendeeText(PLACEHOLDER, opts.method);
  const at = whole.indexOf(stand);
  const organizer = opts.organizer;
  const standOrganizer = organizer ? organizerText(organizer) : '';
  const orgAt = organizer ? whole.indexOf(standOrganizer) : -1;
  // Never expected (each line is written once, the organizer's before the attendee's); stay correct.
  if (at < 0 || (organizer && (orgAt < 0 || orgAt > at))) {
    return ({ organizerEmail, ...attendee }) =>
      buildIcs([event], { ...opts, ...(organizer && organizerEmail ? { organizer: { ...organizer, email: organizerEmail } } : {}), attendees: [attendee] });
  }
  const head = organizer ? whole.slice(0, orgAt) : '';
  const middle = organizer ? whole.slice(orgAt + standOrganizer.length, at) : whole.slice(0, at);
  const after = whole.slice(at + stand.length);
  return ({ organizerEmail, ...attendee }) => {
    const org = organizer ? (organizerEmail ? organizerText({ ...organizer, email: organizerEmail }) : standOrganizer) : '';
    return head + org + middle + attendeeText(attendee, opts.method) + after;
  };
}
