import type { TextScan } from './text-scan';

/**
 * How long the event lasts, when the text says so instead of giving an end: "for 90
 * minutes", "45 mins", "(45 minutes)", "for 1h", "1h30", "a 30-minute call", "for an hour
 * and a half", "for 3 days". "in 2 hours" is not one (it says when the event starts).
 */
export interface Duration {
  minutes: number;
  /** Whole days ("for 3 days"): for all-day events, the number of days covered. */
  days: number | null;
  start: number;
  end: number;
}

const WORD_NUMBERS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, fifteen: 15, twenty: 20, thirty: 30, forty: 40, 'forty-five': 45, ninety: 90,
  'half an': 0.5, 'half a': 0.5, 'a couple of': 2, 'a couple': 2, couple: 2,
};

// Number words need a space after them: "AM" is not "a m(inute)".
const NUMBER = String.raw`(\d{1,4}(?:[.,]\d{1,2})?|(?:half an?|a couple(?: of)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty-five|forty|ninety)(?=[ ]))`;
const UNIT = String.raw`(hours?|hrs?|h|minutes?|mins?|m|days?)`;
// "and a half", "30 minutes" (as in 1 hour 30 minutes), "30" (as in 1h30)
const EXTRA = String.raw`(?:[ ](?:and[ ])?(a half)|[ ]?(?:and[ ])?(\d{1,2})[ ]?(?:minutes?|mins?|m)(?![A-Za-z])|(\d{2})(?!\d))?`;

const PATTERNS: RegExp[] = [
  // for 90 minutes · for about an hour · lasting 2 hours · duration: 45 min
  new RegExp(String.raw`\b(?:for|lasting|lasts|duration:?)[ ](?:about[ ]|around[ ]|approx\.?[ ]|approximately[ ]|roughly[ ]|the[ ]next[ ])?${NUMBER}[ ]?-?${UNIT}(?![A-Za-z])${EXTRA}`, 'gi'),
  // (45 minutes) · (1h)
  new RegExp(String.raw`\([ ]?(?:approx\.?[ ]|about[ ])?${NUMBER}[ ]?-?${UNIT}(?![A-Za-z])${EXTRA}[ ]?\)`, 'gi'),
  // a 30-minute call · 2-hour workshop
  new RegExp(String.raw`\b${NUMBER}-(hour|hr|minute|min|day)\b()`, 'gi'),
  // 45 mins · 1h30 · 1.5 hrs (not "in 45 mins", "45 mins before", "every 2 hours")
  new RegExp(String.raw`(?<!\b(?:in|within|every|than|after|before|until|till|by|of)[ ])(?<![\d:])\b${NUMBER}[ ]?${UNIT}(?![A-Za-z])${EXTRA}(?![ ]?(?:before|after|ago|early|earlier|late|later|prior|from now|of|notice|break|away|left|to go|each|per))`, 'gi'),
];

function numberOf(word: string): number {
  const lower = word.toLowerCase();
  return WORD_NUMBERS[lower] ?? Number(lower.replace(',', '.'));
}

function toDuration(amount: number, unit: string, extra: string | undefined): { minutes: number; days: number | null } | null {
  const u = unit.toLowerCase();
  let minutes: number;
  let days: number | null = null;
  if (u.startsWith('d')) {
    days = amount;
    minutes = amount * 24 * 60;
  } else if (u.startsWith('h')) {
    minutes = amount * 60;
    if (extra) minutes += extra === 'a half' ? 30 : Number(extra);
  } else {
    if (u === 'm' && !extra && amount > 300) return null; // "300m" is a distance more likely than a duration
    minutes = amount;
  }
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 60 * 24 * 366) return null;
  return { minutes: Math.round(minutes), days: days !== null && Number.isInteger(days) ? days : null };
}

/** The first duration phrase in the unmarked text; it is marked so no other rule reads it. */
export function findDuration(scan: TextScan): Duration | null {
  const text = scan.text;
  let best: Duration | null = null;
  for (const pattern of PATTERNS) {
    for (const m of text.matchAll(pattern)) {
      if (scan.overlaps(m.index, m.index + m[0].length)) continue;
      const parsed = toDuration(numberOf(m[1]), m[2], m[3] || m[4] || m[5] || undefined);
      if (!parsed) continue;
      if (!best || m.index < best.start) best = { ...parsed, start: m.index, end: m.index + m[0].length };
      break;
    }
  }
  if (best) scan.mark('duration', best.start, best.end);
  return best;
}
