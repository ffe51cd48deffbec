/**
 * The recurrence builder's model: the rules a person builds with a few controls (every N
 * days, weeks on some weekdays, months or years; forever, N times or until a date), written
 * as an RFC 5545 RRULE and said in words. A rule it cannot show is kept as text to edit.
 */
export type Freq = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Recurrence {
  freq: Freq;
  interval: number;
  byday: Weekday[];
  end: 'never' | 'count' | 'until';
  count: number;
  /** YYYY-MM-DD, the last day an occurrence may start. */
  until: string;
}

export const DAY_NAMES: Record<Weekday, string> = { MO: 'Monday', TU: 'Tuesday', WE: 'Wednesday', TH: 'Thursday', FR: 'Friday', SA: 'Saturday', SU: 'Sunday' };
const UNIT: Record<Freq, string> = { DAILY: 'day', WEEKLY: 'week', MONTHLY: 'month', YEARLY: 'year' };

export function toRule(r: Recurrence): string {
  const parts = [`FREQ=${r.freq}`];
  if (r.interval > 1) parts.push(`INTERVAL=${r.interval}`);
  if (r.freq === 'WEEKLY' && r.byday.length) parts.push(`BYDAY=${WEEKDAYS.filter((d) => r.byday.includes(d)).join(',')}`);
  if (r.end === 'count') parts.push(`COUNT=${r.count}`);
  if (r.end === 'until' && r.until) parts.push(`UNTIL=${r.until.replace(/-/g, '')}`);
  return parts.join(';');
}

/** The builder's model of a rule, or null for one it cannot show (BYMONTHDAY, BYSETPOS, …). */
export function parseRule(rule: string): Recurrence | null {
  const fields = new Map<string, string>();
  for (const part of rule.replace(/^RRULE:/i, '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) return null;
    fields.set(part.slice(0, eq).toUpperCase(), part.slice(eq + 1).toUpperCase());
  }
  const freq = fields.get('FREQ') as Freq | undefined;
  if (!freq || !(freq in UNIT)) return null;
  const known = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'COUNT', 'UNTIL', 'WKST']);
  if ([...fields.keys()].some((k) => !known.has(k))) return null;
  const byday = (fields.get('BYDAY') ?? '').split(',').filter(Boolean);
  if (byday.some((d) => !(WEEKDAYS as readonly string[]).includes(d)) || (byday.length && freq !== 'WEEKLY')) return null;
  const interval = Number(fields.get('INTERVAL') ?? '1');
  const count = fields.get('COUNT');
  const until = fields.get('UNTIL');
  const untilDate = until ? /^(\d{4})(\d{2})(\d{2})/.exec(until) : null;
  if (!Number.isInteger(interval) || interval < 1 || (until && !untilDate)) return null;
  return {
    freq,
    interval,
    byday: byday as Weekday[],
    end: count ? 'count' : until ? 'until' : 'never',
    count: count ? Number(count) : 10,
    until: untilDate ? `${untilDate[1]}-${untilDate[2]}-${untilDate[3]}` : '',
  };
}

const list = (words: string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`);

/** The rule in words: "Every 2 weeks on Monday and Wednesday, 10 times". */
export function describe(r: Recurrence): string {
  const unit = UNIT[r.freq];
  let text = r.interval === 1 ? `Every ${unit}` : `Every ${r.interval} ${unit}s`;
  if (r.freq === 'WEEKLY' && r.byday.length) text += ` on ${list(WEEKDAYS.filter((d) => r.byday.includes(d)).map((d) => DAY_NAMES[d]))}`;
  if (r.end === 'count') text += r.count === 1 ? ', once' : `, ${r.count} times`;
  if (r.end === 'until' && r.until) {
    const [y, m, d] = r.until.split('-').map(Number);
    text += `, until ${new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeZone: 'UTC' }).format(Date.UTC(y, m - 1, d))}`;
  }
  return text;
}
