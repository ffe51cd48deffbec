import { type Line, linesOf, type TextScan } from './text-scan';

/**
 * "Name: value" lines of emails and invitations (Outlook, Google Calendar, event flyers).
 * What they say wins over guesses from prose: Subject is the title, Where the location,
 * When the date. The sender's lines (From, Sent, To…) are not about the event at all.
 */
type HeaderRole = 'title' | 'when' | 'where' | 'sender' | 'sent-date' | 'other';

export interface HeaderLine extends Line {
  name: string;
  role: HeaderRole;
  /** Where the value starts in the text, and the value itself (trimmed). */
  valueStart: number;
  value: string;
}

const ROLES: Record<string, HeaderRole> = {
  subject: 'title',
  title: 'title',
  what: 'title',
  event: 'title',
  when: 'when',
  time: 'when',
  start: 'when',
  starts: 'when',
  'date and time': 'when',
  'date & time': 'when',
  where: 'where',
  location: 'where',
  venue: 'where',
  place: 'where',
  address: 'where',
  from: 'sender',
  to: 'sender',
  cc: 'sender',
  bcc: 'sender',
  'reply-to': 'sender',
  organizer: 'sender',
  organiser: 'sender',
  attendees: 'sender',
  guests: 'sender',
  invitees: 'sender',
  sent: 'sent-date',
  date: 'when', // an event flyer's "Date:"; an email's "Date:" is when it was sent (see below)
};

// The value keeps its leading spaces (findHeaders measures them): `:[ ]*(.*)$` gave a line
// of spaces that `.` cannot finish (a U+2028 after them) to the two quantifiers to share.
const HEADER = /^[ ]{0,8}([A-Za-z][A-Za-z &-]{0,20}?)[ ]{0,4}:(.*)$/;

export function findHeaders(text: string): HeaderLine[] {
  const found: HeaderLine[] = [];
  for (const line of linesOf(text)) {
    const m = HEADER.exec(line.text);
    if (!m) continue;
    const name = m[1].trim().toLowerCase();
    const role = ROLES[name];
    if (!role) continue;
    const rawValue = m[2];
    const lead = rawValue.length - rawValue.trimStart().length;
    found.push({ ...line, name, role, valueStart: line.end - rawValue.length + lead, value: rawValue.trim() });
  }
  // With sender lines around, "Date:" is the email's own date, not the event's.
  if (found.some((h) => h.role === 'sender' || h.role === 'sent-date')) {
    for (const h of found) if (h.name === 'date') h.role = 'sent-date';
  }
  return found;
}

/** Hides the lines that are not about the event (who sent it and when) from every rule. */
export function markSenderLines(scan: TextScan, headers: HeaderLine[]): void {
  for (const h of headers) if (h.role === 'sender' || h.role === 'sent-date') scan.mark('header', h.start, h.end);
}
