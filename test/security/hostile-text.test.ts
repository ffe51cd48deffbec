import fc from 'fast-check';
import { ExtractionFailure } from '../../services/extraction-worker/extractor/extractor';
import { extractWithRules } from '../../services/extraction-worker/extractor/rules-extractor';
import { htmlToText, looksLikeHtml, sanitizeDescription } from '../../shared/calendar/html';
import { cpuMsOf } from '../helpers/cpu';

/**
 * Property-based tests (fast-check) of the two places where anyone's text meets patterns:
 * the extractor (up to 8000 characters, the API's limit) and the description sanitizer (up
 * to 50,000). Texts are random, and adversarial: built from each one's own vocabulary (day
 * names, "every", times, dates, zones, units, numbers, punctuation, runs of spaces; HTML
 * fragments for the sanitizer), words repeated and interleaved to the full length, then
 * something that fails at the end, the shape that makes a super-linear pattern pay. Each
 * must stay within a budget far above what they take (tens of milliseconds at most): the
 * worker's own 1 s for the extractor, the same for a description read and written back.
 * The seed is fixed so a failure reproduces; FUZZ_SEED and FUZZ_RUNS change it.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const EXTRACT_BUDGET_MS = 1000;
const DESCRIPTION_BUDGET_MS = 1000;
const options = { seed: SEED, numRuns: RUNS, endOnFailure: true };
jest.setTimeout(180_000);

/**
 * An attack's shape: a lead, a short unit (one to four words, each with what follows it)
 * repeated, sometimes in turn with a second one, to about `length`, then a tail that fails.
 * Words come from one theme at a time (the units of a duration, the days of a list…), so
 * that the words one pattern reads meet each other.
 */
function repeated(themes: string[][], separators: fc.Arbitrary<string>, lengths: fc.Arbitrary<number>): fc.Arbitrary<string> {
  return fc.constantFrom(...themes).chain((theme) => {
    const word = fc.constantFrom(...theme);
    const unit = fc.array(fc.tuple(word, separators), { minLength: 1, maxLength: 4 }).map((parts) => parts.map(([w, sep]) => w + sep).join(''));
    return fc.tuple(word, separators, fc.array(unit, { minLength: 1, maxLength: 2 }), lengths, fc.constantFrom('', 'x', '!', '\n', 'W', '<', '0')).map(([lead, gap, units, length, tail]) => {
      let text = lead + gap;
      for (let i = 0; text.length < length - tail.length; i++) text += units[i % units.length];
      return text.slice(0, Math.max(0, length - tail.length)) + tail;
    });
  });
}

/** Mostly long: the cost of a super-linear pattern shows at full length. */
const upTo = (max: number) => fc.oneof(fc.constant(max), fc.integer({ min: Math.floor(max * 0.8), max }), fc.integer({ min: 1, max }));

const LINKS = ['and', 'or', '&', '/', ',', 'on', 'at', 'to', 'from', 'the', 'of', 'in', 'for', '-', '.'];
const EXTRACTOR_THEMES: string[][] = [
  // repetition: days and their lists
  ['every', 'each', 'other', 'Monday', 'Mon', 'mondays', 'Tue', 'tues', 'Tuesday', 'weds', 'Wednesday', 'thu', 'thur', 'thurs', 'Fri', 'Fridays', 'sat', 'Sun', 'sundays', 'weekday', 'weekends', 'daily', 'weekly', 'first', 'last', 'month', ...LINKS],
  // durations and relative times
  ['1', '2', '9', '12', '90', 'one', 'two', 'a', 'an', 'a couple of', 'couple', 'half', 'few', 'several', 'about', 'm', 'h', 'd', 'w', 'min', 'mins', 'hr', 'hours', 'minutes', 'days', 'weeks', 'mon', '1h30', 'ago', 'later', 'from now', 'in', 'for', 'within', 'next', 'and', ','],
  // times, dates and ranges
  ['10', '10:00', '5pm', '10am', '9:30-9:45am', '12/05/2026', '3/4', '14.03.', '2026-03-04', 'March', 'Dec 31', 'April 14-16', '3rd', 'the 15th', 'tomorrow', 'noon', 'midnight', 'a.m.', 'p.m.', 'am', 'pm', 'T', 'Z', ...LINKS],
  // weekends, days of the month, numeric ranges, spoken and chat times
  ['this', 'next', 'the', 'weekend', 'weekend of', 'Friday', 'the 31st', 'the 13th', '3/30-4/3', '99/99-1/2', 'half', 'quarter', 'past', 'to', '@', '@ 8', 'tonite', 'tmrw', 'six', '7', '11-1pm', 'noon-1', ...LINKS],
  // zones
  ['PT', 'EST', 'CET', 'GMT', 'GMT+2', 'UTC', 'UTC-05:00', '(UTC-05:00)', '(', ')', '+', '-', ':', '05', 'Eastern', 'Pacific', 'Central', 'Mountain', 'Standard', 'Summer', 'Time', 'time', 'London', 'America/New_York', 'Europe/', '9am', 'noon', '/'],
  // places, headers, titles
  ['at', 'in', '@', 'The', 'Loft', 'Room', '4B', '123', 'Main', 'St', 'St.', 'Ave', 'Rue', ',', '.', '-', '|', 'When:', 'Where:', 'Subject:', 'Re:', 'Invitation:', 'https://zoom.us/j/1', '(a@b.c)', 'Reminder:', 'Join', 'Zoom', 'meeting', '(ground floor)', '(', '/', 'de', 'la', 'is', 'will be', 'held', 'moved', 'scheduled', 'for'],
  // punctuation and numbers alone
  ['1', '12', '2026', ',', '.', ';', ':', '-', '–', '/', '&', '(', ')', '!', '?', '"', "'", '·', '|', '@', '+'],
];
EXTRACTOR_THEMES.push(EXTRACTOR_THEMES.flat());
const EXTRACTOR_SEPARATORS = fc.constantFrom(' ', ' ', '', '', '  ', '   ', '\n', ' \n ', '\n\n', '\t', ', ', ' and ', '\u00a0', '\u2028');

const extractorTexts = fc.oneof(
  { weight: 4, arbitrary: repeated(EXTRACTOR_THEMES, EXTRACTOR_SEPARATORS, upTo(8000)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8000 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 7000, maxLength: 8000, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.string({ minLength: 7000, maxLength: 8000, unit: fc.constantFrom(...' \n,.:-/0123456789amptAMPTdhmsy') }) },
);

const HTML_THEMES: string[][] = [
  ['<p', '<p ', '<p>', '</p>', '<br', '<br/>', '</', '<', '>', '/>', '<b>', '</b>', '<i>', '<ul>', '<li>', '<ol', '</li>', '<div>', '<span', '<table>', '<td>', 'x', 'text'],
  ['<a href="', '<a ', 'href=', 'title=', '"', "'", '=', '>', '<', 'javascript:', 'onerror=', '<img src=x', '<iframe', '<svg', '<math', '<script>', '</script>', '<style>'],
  ['<!--', '-->', '<![CDATA[', ']]>', '<!DOCTYPE', '<?xml', '&', '&amp;', '&#', '&#x', '&lt;', ';', '0', 'x', '<', '>'],
];
HTML_THEMES.push(HTML_THEMES.flat());
const HTML_SEPARATORS = fc.constantFrom('', '', ' ', '  ', '\n', '\n\n', '\r\n');

const descriptions = fc.oneof(
  { weight: 3, arbitrary: repeated(HTML_THEMES, HTML_SEPARATORS, upTo(50_000)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 50_000 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 40_000, maxLength: 50_000, unit: fc.constantFrom(...'<>/p "=\'&;!-a\n') }) },
);

const REFERENCE = new Date('2026-03-05T15:00:00Z');

describe('the extractor, on any text up to 8000 characters', () => {
  it('answers (or fails with a reason) within the 1 s budget', () => {
    fc.assert(
      fc.property(extractorTexts, fc.constantFrom('America/New_York', 'Europe/London', 'UTC'), (text, timezone) => {
        let error: unknown;
        const ms = cpuMsOf(() => {
          try {
            extractWithRules({ text, timezone, referenceDate: REFERENCE });
          } catch (err) {
            error = err;
          }
        });
        // A text nothing can be read from fails as such; anything else thrown is a bug.
        if (error !== undefined && !(error instanceof ExtractionFailure)) throw error;
        return ms < EXTRACT_BUDGET_MS;
      }),
      options,
    );
  });
});

describe('descriptions, on any text up to 50,000 characters', () => {
  it('are sanitized, and read back as text, within a 1 s budget', () => {
    fc.assert(
      fc.property(descriptions, (text) => cpuMsOf(() => htmlToText(sanitizeDescription(text))) < DESCRIPTION_BUDGET_MS),
      options,
    );
  });

  it('count as HTML exactly when the single pattern they replace said so', () => {
    // The pattern the HTML check used to be (quadratic, but fine on texts this short): a
    // known tag start, then a ">" at once or after a space and anything but ">".
    const before =
      /<\/?(?:p|br|div|span|a|b|strong|i|em|u|s|strike|ul|ol|li|h[1-6]|blockquote|pre|code|hr|img|script|style|iframe|table|thead|tbody|tr|td|th|font|center|section|article|header|footer|nav|form|input|button|svg|math|object|embed|link|meta|base|video|audio|source|details|summary)(?:\s[^>]*)?\/?>/i;
    fc.assert(
      fc.property(repeated(HTML_THEMES, HTML_SEPARATORS, fc.integer({ min: 1, max: 300 })), (text) => looksLikeHtml(text) === before.test(text)),
      { ...options, numRuns: RUNS * 20 },
    );
  });
});
