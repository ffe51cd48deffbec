import { DateTime } from 'luxon';

/**
 * How an extraction is judged against the corpora (../shared/extract-corpus.json and
 * bench/extract-corpus.json): start
 * and end exact to the minute (instants compared, so any offset spelling is fine; all-day
 * cases by calendar day), the all-day flag, title and location by word overlap, the RRULE
 * by its parts.
 */
export interface CorpusCase {
  id: number;
  /** bench/extract-corpus.json: "dev" (tuned on) or "test" (held out); absent: the shared corpus. */
  split?: string;
  /** What kind of writing the case stands for ("day spans", "chat shorthand"…). */
  category?: string;
  text: string;
  timezone: string;
  reference_date: string;
  expected: {
    is_all_day: boolean;
    date_start?: string;
    date_end?: string;
    start_date?: string;
    end_date?: string;
    title?: string | null;
    location?: string | null;
    recurrence_rule?: string | null;
  };
}

export interface Answer {
  is_all_day: boolean;
  date_start: string;
  date_end: string;
  title: string | null;
  location: string | null;
  recurrence_rule: string | null;
}

export const FIELDS = ['start', 'end', 'all-day', 'title', 'location', 'recurrence'] as const;
export type Field = (typeof FIELDS)[number];
/** true/false: right/wrong; null: the case does not judge this field. */
export type Score = Record<Field, boolean | null>;

/** Lower-cased words without punctuation. */
const words = (s: string) => new Set(s.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, ' ').split(/\s+/).filter(Boolean));

/**
 * Word overlap: shared words ÷ all distinct words of both (Jaccard), at least 0.6; two
 * nulls agree.
 */
export function sameText(got: string | null, want: string | null): boolean {
  if (got === null || want === null) return got === want;
  const a = words(got);
  const b = words(want);
  const shared = [...a].filter((w) => b.has(w)).length;
  const all = new Set([...a, ...b]).size;
  return all > 0 && shared / all >= 0.6;
}

const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000);

/** The calendar day an answer's date names in the case's zone (all-day answers are days already). */
function dayOf(value: string, zone: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  return DateTime.fromISO(value, { setZone: true }).setZone(zone).toISODate() ?? '';
}

function sameMoment(got: string, allDayAnswer: boolean, want: { instant?: string; day?: string }, zone: string): boolean {
  if (want.day !== undefined) return dayOf(got, zone) === want.day;
  return !allDayAnswer && want.instant !== undefined && minute(got) === minute(want.instant);
}

/** RRULE parts as a set, so the order of parts does not matter. */
const ruleParts = (rule: string | null | undefined) => (rule ? rule.replace(/^RRULE:/i, '').toUpperCase().split(';').sort().join(';') : null);

export function score(c: CorpusCase, a: Answer | null): Score {
  const e = c.expected;
  if (!a) {
    return { start: false, end: false, 'all-day': false, title: 'title' in e ? false : null, location: 'location' in e ? false : null, recurrence: !e.recurrence_rule };
  }
  return {
    start: sameMoment(a.date_start, a.is_all_day, e.is_all_day ? { day: e.start_date } : { instant: e.date_start }, c.timezone),
    end: sameMoment(a.date_end, a.is_all_day, e.is_all_day ? { day: e.end_date } : { instant: e.date_end }, c.timezone),
    'all-day': a.is_all_day === e.is_all_day,
    title: 'title' in e ? sameText(a.title, e.title ?? null) : null,
    location: 'location' in e ? sameText(a.location, e.location ?? null) : null,
    recurrence: ruleParts(a.recurrence_rule) === ruleParts(e.recurrence_rule),
  };
}

export interface Tally {
  right: number;
  judged: number;
}

export function tally(scores: Score[]): Record<Field, Tally> {
  const out = Object.fromEntries(FIELDS.map((f) => [f, { right: 0, judged: 0 }])) as Record<Field, Tally>;
  for (const s of scores) {
    for (const f of FIELDS) {
      if (s[f] === null) continue;
      out[f].judged++;
      if (s[f]) out[f].right++;
    }
  }
  return out;
}

export const percent = (t: Tally) => (t.judged ? (100 * t.right) / t.judged : 0);
