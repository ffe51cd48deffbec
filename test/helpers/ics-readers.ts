import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import ICAL from 'ical.js';

/** One VEVENT as a reader places it: its UID, its start and (recurring) its first occurrences, as UTC milliseconds. */
export interface ReadEvent {
  uid: string;
  startMs: number;
  occurrencesMs?: number[];
}

/**
 * An .ics read by ical.js, the parser of Thunderbird and many web clients: each VEVENT's
 * start, and the first `limit` occurrences of a recurring one, through the file's own
 * VTIMEZONE.
 */
export function readWithIcalJs(text: string, limit = 100): ReadEvent[] {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    const read: ReadEvent = { uid: event.uid, startMs: event.startDate.toJSDate().getTime() };
    if (event.isRecurring()) {
      const iterator = event.iterator();
      read.occurrencesMs = [];
      for (let next = iterator.next(); next && read.occurrencesMs.length < limit; next = iterator.next()) read.occurrencesMs.push(next.toJSDate().getTime());
    }
    return read;
  });
}

/** Debian's python3-icalendar is installed for /usr/bin/python3 (another python3 may come first on PATH). */
const PYTHON = '/usr/bin/python3';
const READER = join(__dirname, 'icalendar-reader.py');

/** Whether python-icalendar can be run here; the reason when it cannot. */
export function pythonIcalendarMissing(): string | null {
  const run = spawnSync(PYTHON, ['-c', 'import icalendar, dateutil'], { encoding: 'utf8' });
  if (run.error) return `${PYTHON} cannot be run (${run.error.message})`;
  return run.status === 0 ? null : `${PYTHON} has no icalendar module (apt-get install python3-icalendar)`;
}

/**
 * An .ics read by python-icalendar through the file's own VTIMEZONE (Timezone.to_tz), each
 * recurrence expanded on the wall clock by dateutil (COUNT rules only).
 */
export function readWithPythonIcalendar(text: string, limit = 100): ReadEvent[] {
  const run = spawnSync(PYTHON, [READER, String(limit)], { input: text, encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`python-icalendar failed (${run.status}): ${run.stderr}`);
  const events = JSON.parse(run.stdout) as { uid: string; start: string; occurrences?: string[] }[];
  return events.map((e) => ({
    uid: e.uid,
    startMs: Date.parse(e.start),
    ...(e.occurrences ? { occurrencesMs: e.occurrences.map((o) => Date.parse(o)) } : {}),
  }));
}
