import ICAL from 'ical.js';
import type { InviteeResponse } from '../../shared/invites/invitee-json';

/** What an iTIP message at an invitee's reply address says about their answer. */
type ReplyReading =
  | { answer: InviteeResponse; sequence: number; attendee: string; delegate: boolean }
  | { ignored: 'not_calendar' | 'not_reply' | 'other_event' | 'occurrence_only' | 'no_attendee' | 'no_answer' };

const PARTSTAT: Record<string, InviteeResponse> = { ACCEPTED: 'accepted', DECLINED: 'declined', TENTATIVE: 'tentative' };

const mailto = (value: unknown) => {
  const text = typeof value === 'string' ? value.trim() : '';
  return (text.toLowerCase().startsWith('mailto:') ? text.slice(7) : text).toLowerCase();
};

/** A parameter's values (DELEGATED-FROM may hold several), as addresses. */
const addresses = (prop: ICAL.Property, name: string): string[] => {
  const v = prop.getParameter(name) as string | string[] | undefined;
  return (Array.isArray(v) ? v : v ? [v] : []).map(mailto);
};

/**
 * Reads an iTIP REPLY (RFC 5546 §3.2.3) as calendar apps send it to the ORGANIZER:
 * the METHOD comes from the VCALENDAR or, for clients that give it only there, from the
 * part's Content-Type; the VEVENT must be our event's (UID `evt_<uid>@…`, any host), and
 * a reply about one occurrence only (RECURRENCE-ID) is not taken as the answer to the
 * whole event. The answer is the PARTSTAT of the invitee's own ATTENDEE line; when it
 * says DELEGATED, or the line is missing, the answer of an attendee delegated by the
 * invitee (DELEGATED-FROM) stands for them, and failing that a reply with one attendee
 * (the person answered from another of their addresses, or renamed) is theirs, since only
 * they were sent this reply address. NEEDS-ACTION and unknown values change nothing.
 */
export function readItipReply(text: string, contentMethod: string | undefined, eventUid: string, inviteeEmail: string): ReplyReading {
  let calendar: ICAL.Component;
  try {
    const parsed = ICAL.parse(text) as unknown;
    // One VCALENDAR; a file of several takes the first.
    calendar = new ICAL.Component((Array.isArray(parsed) && typeof parsed[0] !== 'string' ? parsed[0] : parsed) as unknown[]);
  } catch {
    return { ignored: 'not_calendar' };
  }
  if (calendar.name !== 'vcalendar') return { ignored: 'not_calendar' };
  const method = String(calendar.getFirstPropertyValue('method') ?? contentMethod ?? '').toUpperCase();
  if (method !== 'REPLY') return { ignored: 'not_reply' };
  const ours = calendar.getAllSubcomponents('vevent').filter((v) => String(v.getFirstPropertyValue('uid') ?? '').startsWith(`evt_${eventUid}@`));
  if (!ours.length) return { ignored: 'other_event' };
  const master = ours.find((v) => !v.hasProperty('recurrence-id'));
  if (!master) return { ignored: 'occurrence_only' };
  const sequence = Number(master.getFirstPropertyValue('sequence') ?? 0);
  const attendees = master.getAllProperties('attendee');
  if (!attendees.length) return { ignored: 'no_attendee' };
  const me = inviteeEmail.toLowerCase();
  const own = attendees.find((a) => mailto(a.getFirstValue()) === me);
  const delegates = attendees.filter((a) => addresses(a, 'delegated-from').includes(me));
  const partstat = (a: ICAL.Property) => PARTSTAT[String(a.getParameter('partstat') ?? '').toUpperCase()];
  const candidates: Array<[ICAL.Property, boolean]> = [
    ...(own ? [[own, false] as [ICAL.Property, boolean]] : []),
    ...delegates.map((a) => [a, true] as [ICAL.Property, boolean]),
    ...(!own && !delegates.length && attendees.length === 1 ? [[attendees[0], false] as [ICAL.Property, boolean]] : []),
  ];
  for (const [a, delegate] of candidates) {
    const answer = partstat(a);
    if (answer) return { answer, sequence: Number.isSafeInteger(sequence) && sequence >= 0 ? sequence : 0, attendee: mailto(a.getFirstValue()), delegate };
  }
  return { ignored: candidates.length ? 'no_answer' : 'no_attendee' };
}
