import { recurrenceText } from '../../shared/calendar/recurrence';
import { localRecurrenceText } from '../../shared/i18n/recurrence';
import { LOCALES } from '../../shared/i18n/translations';

/**
 * A repeating event's rule in the reader's language. The weekday names, lists and dates
 * are the ones Intl writes for the language (computed here with Intl, not with our code);
 * the phrases around them are what a speaker writes.
 */
const day = (locale: string, i: number) => new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 1 + i));
const both = (locale: string, a: string, b: string) => new Intl.ListFormat(locale, { type: 'conjunction' }).format([a, b]);
const date = (locale: string, y: number, m: number, d: number) => new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }).format(Date.UTC(y, m - 1, d));
const ZONE = 'Europe/Berlin';

it.each([
  ['de', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10', `jede Woche am ${both('de', day('de', 1), day('de', 3))}, 10-mal`],
  ['de', 'FREQ=MONTHLY;BYDAY=1MO', 'jeden Monat am ersten Montag'],
  ['de', 'FREQ=MONTHLY;BYMONTHDAY=15;INTERVAL=2', 'alle 2 Monate am 15.'],
  ['fr', 'FREQ=MONTHLY;BYDAY=-1SU;UNTIL=20271231T225959Z', `tous les mois, le dernier dimanche jusqu’au ${date('fr', 2027, 12, 31)}`],
  ['fr', 'FREQ=DAILY;COUNT=1', 'tous les jours, une fois'],
  ['es', 'FREQ=YEARLY;INTERVAL=2', 'cada 2 años'],
  ['pt', 'FREQ=MONTHLY;BYDAY=2MO', 'todos os meses, na segunda segunda-feira'],
  ['pt', 'FREQ=MONTHLY;BYDAY=-1SU', 'todos os meses, no último domingo'],
  ['it', 'FREQ=MONTHLY;BYDAY=1SU', 'ogni mese, la prima domenica'],
  ['it', 'FREQ=MONTHLY;BYDAY=1MO', 'ogni mese, il primo lunedì'],
  ['nl', 'FREQ=WEEKLY;INTERVAL=3;BYDAY=SA,SU', `om de 3 weken op ${both('nl', day('nl', 5), day('nl', 6))}`],
  ['ja', 'FREQ=WEEKLY;BYDAY=TU;COUNT=4', `毎週（${day('ja', 1)}）、4回`],
  ['ja', 'FREQ=MONTHLY;BYDAY=-1FR', `毎月の最終${day('ja', 4)}`],
] as const)('%s: %s', (locale, rule, text) => {
  expect(localRecurrenceText(rule, ZONE, locale)).toBe(text);
});

it('reads a UTC end date as the day it falls on in the event’s zone', () => {
  // 23:30 UTC on 31 March is already 1 April in Berlin.
  expect(localRecurrenceText('FREQ=DAILY;UNTIL=20270331T233000Z', ZONE, 'de')).toBe(`jeden Tag bis ${date('de', 2027, 4, 1)}`);
});

it('leaves English as it was, and gives a rule beyond what it reads in English rather than half read', () => {
  for (const rule of ['FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10', 'FREQ=MONTHLY;BYDAY=1MO', 'FREQ=YEARLY;BYMONTH=3;BYDAY=2SU']) {
    expect(localRecurrenceText(rule, ZONE, 'en')).toBe(recurrenceText(rule, ZONE));
  }
  for (const locale of LOCALES) {
    for (const rule of ['FREQ=YEARLY;BYMONTH=3;BYDAY=2SU', 'FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1', 'FREQ=MONTHLY;BYDAY=5MO', 'FREQ=DAILY;BYDAY=MO', 'FREQ=HOURLY']) {
      expect([locale, rule, localRecurrenceText(rule, ZONE, locale)]).toEqual([locale, rule, recurrenceText(rule, ZONE)]);
    }
  }
});
