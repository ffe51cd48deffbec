import { recurrenceText, untilAsLocalDate } from '../calendar/recurrence';
import de from './locales/recurrence.de.json';
import en from './locales/recurrence.en.json';
import es from './locales/recurrence.es.json';
import fr from './locales/recurrence.fr.json';
import it from './locales/recurrence.it.json';
import ja from './locales/recurrence.ja.json';
import nl from './locales/recurrence.nl.json';
import pt from './locales/recurrence.pt.json';
import { type Locale, translators } from './translations';

/** The words of a repeating event's rule, a catalog per language (English the reference). */
export const CATALOGS = { en, de, fr, es, pt, it, nl, ja } as const;
const texts = translators('recurrence', CATALOGS);

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
type Weekday = (typeof WEEKDAYS)[number];
const FREQS = { DAILY: 'daily', WEEKLY: 'weekly', MONTHLY: 'monthly', YEARLY: 'yearly' } as const;
/** What a rule may hold to be read out here; any other part (BYSETPOS, BYMONTH, …) is left to the English reading. */
const READ = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'WKST']);
const NTH = { '1': '1', '2': '2', '3': '3', '4': '4', '-1': 'last' } as const;
const ORDINAL_DAY = /^([+-]?\d)?(MO|TU|WE|TH|FR|SA|SU)$/;

const names = new Map<string, Intl.DateTimeFormat | Intl.ListFormat>();
/** The language's name of a weekday (2024-01-01 was a Monday). */
function dayName(locale: Locale, day: Weekday): string {
  const key = `day ${locale}`;
  const f = (names.get(key) ?? names.set(key, new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone: 'UTC' })).get(key)) as Intl.DateTimeFormat;
  return f.format(Date.UTC(2024, 0, 1 + WEEKDAYS.indexOf(day)));
}
function list(locale: Locale, items: string[]): string {
  const key = `list ${locale}`;
  return ((names.get(key) ?? names.set(key, new Intl.ListFormat(locale, { type: 'conjunction' })).get(key)) as Intl.ListFormat).format(items);
}
function longDate(locale: Locale, ymd: string): string {
  const key = `date ${locale}`;
  const f = (names.get(key) ?? names.set(key, new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' })).get(key)) as Intl.DateTimeFormat;
  return f.format(Date.UTC(Number(ymd.slice(0, 4)), Number(ymd.slice(4, 6)) - 1, Number(ymd.slice(6, 8))));
}

/**
 * A (checked) rule in words, in `locale`: "jede Woche am Dienstag und Donnerstag, 10-mal".
 * English is recurrenceText's (shared/calendar/recurrence.ts). Other languages read the
 * rules people make (every n days, weeks, months or years; weekly on some weekdays; monthly
 * on a day of the month or the first to fourth or last weekday; a count or an end date) with
 * the catalog's words and Intl's weekday names, lists and dates; a rule beyond those is
 * given in English rather than half read.
 */
export function localRecurrenceText(checked: string, zone: string, locale: Locale): string | null {
  const english = () => recurrenceText(checked, zone);
  if (locale === 'en') return english();
  const parts = new Map(untilAsLocalDate(checked, zone).split(';').map((p) => p.split('=', 2) as [string, string]));
  const freq = FREQS[parts.get('FREQ') as keyof typeof FREQS];
  if (!freq || [...parts.keys()].some((key) => !READ.has(key))) return english();
  const t = texts(locale);
  const interval = Number(parts.get('INTERVAL') ?? '1');
  let rule = interval === 1 ? t(`freq_${freq}_1`) : t(`freq_${freq}_n`, { n: interval });
  const byDay = parts.get('BYDAY');
  const byMonthDay = parts.get('BYMONTHDAY');
  if (byDay && byMonthDay) return english();
  if (byDay) {
    const days = byDay.split(',').map((d) => ORDINAL_DAY.exec(d));
    if (days.some((d) => !d)) return english();
    if (freq === 'weekly' && days.every((d) => !d?.[1])) {
      rule = t('on_days', { freq: rule, days: list(locale, days.map((d) => dayName(locale, d?.[2] as Weekday))) });
    } else if (freq === 'monthly' && days.length === 1 && (days[0]?.[1] ?? '').replace('+', '') in NTH) {
      const day = days[0]?.[2] as Weekday;
      const nth = NTH[(days[0]?.[1] ?? '').replace('+', '') as keyof typeof NTH];
      const feminine = t('feminine_days').split(' ').includes(day);
      rule = t('on_nth_day', { freq: rule, nth: t(feminine ? `nth_f_${nth}` : `nth_${nth}`), day: dayName(locale, day) });
    } else return english();
  } else if (byMonthDay) {
    const day = Number(byMonthDay);
    if (freq !== 'monthly' || !/^\d{1,2}$/.test(byMonthDay) || day < 1 || day > 31) return english();
    rule = t('on_month_day', { freq: rule, day });
  }
  const until = parts.get('UNTIL');
  const count = parts.get('COUNT');
  if (until) return t('end_until', { rule, date: longDate(locale, until.slice(0, 8)) });
  if (count) return Number(count) === 1 ? t('end_once', { rule }) : t('end_times', { rule, n: Number(count) });
  return rule;
}
