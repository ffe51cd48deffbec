import { trimEndOf, trimStartOf } from '../../../shared/text/trim';
import type { HeaderLine } from './headers';
import type { Line, TextScan } from './text-scan';

/**
 * Where the event is. In order of trust: an invitation's "Where:"/"Location:" line; a place
 * after "at", "in" or "@" ("at Cafe Luna", "in Room 4B", "in the main auditorium"); a street
 * address; the last item of a "Title, date, Place" list; a meeting link. A place may end
 * with a bracketed qualifier ("Room 301 (3rd floor)") and name a second one after a slash
 * ("the Library / Room 110").
 */
interface Place {
  value: string;
  /** What to cut from the title: the phrase with its preposition. */
  start: number;
  end: number;
}

const MAX_LENGTH = 255;
const MAX_WORDS = 8;

// Words that end a place name: the sentence goes on about something else.
const STOP = new Set([
  'on', 'from', 'for', 'to', 'at', 'in', 'with', 'by', 'every', 'each', 'this', 'next', 'starting', 'until', 'till',
  'between', 'during', 'before', 'after', 'tomorrow', 'today', 'tonight', 'about', 'regarding', 're', 'via', 'and', 'or',
  'then', 'but', 'please', 'bring', 'rsvp', 'who', 'which', 'where', 'when', 'is', 'are', 'will', 'was', 'be',
]);
// Small words that belong inside a capitalized name ("Bank of America", "Barnes and Noble").
const INNER = new Set(['of', 'the', 'and', '&', 'de', 'del', 'la', 'le', 'du', 'van', 'von', 'der', 'y']);
const DETERMINERS = new Set(['the', 'a', 'an', 'my', 'our', 'your', 'his', 'her', 'their']);
// Lowercase one-word places a person says after "at".
const PLACE_WORDS = new Set([
  'home', 'work', 'school', 'church', 'office', 'campus', 'gym', 'library', 'mine', 'yours', 'ours', 'theirs',
  'cafeteria', 'auditorium', 'gymnasium', 'playground', 'lobby', 'courtyard', 'lounge', 'online',
]);
// "at the moment", "in the afternoon", "in a few days": not places.
const NOT_PLACES = new Set([
  'morning', 'afternoon', 'evening', 'night', 'moment', 'meantime', 'latest', 'earliest', 'end', 'beginning', 'start',
  'middle', 'same', 'few', 'couple', 'bit', 'while', 'row', 'week', 'weekend', 'month', 'year', 'day', 'hour', 'minute',
  'future', 'past', 'least', 'most', 'all', 'once', 'first', 'last', 'time', 'times', 'person', 'advance', 'total',
  'general', 'order', 'case', 'progress', 'touch', 'mind', 'fact', 'addition', 'particular', 'short', 'full', 'detail',
]);
const STREET = String.raw`(?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Ln|Lane|Dr|Drive|Way|Pl|Place|Ct|Court|Sq|Square|Pkwy|Parkway|Hwy|Highway|Ter|Terrace|Cir|Circle|Broadway)`;
const ADDRESS = new RegExp(String.raw`\b\d{1,5}[ ](?:[A-Z][\w'.-]*[ ]){0,4}${STREET}\b\.?(?:,[ ]?[A-Z][A-Za-z .'-]{1,30}?(?=$|[,.;\n]))?(?:,[ ]?[A-Z]{2}(?:[ ]\d{5})?)?`, 'g');
const ON_A_STREET = new RegExp(String.raw`^(?:[A-Z][\w'.-]*[ ]){1,4}${STREET}\.?$`);
const MEETING_APP = /^(?:Zoom|(?:Microsoft[ ])?Teams|Google[ ]Meet|Webex|Skype|FaceTime|Slack|Discord|Jitsi|GoToMeeting|Whereby)$/;
// "at 22 Oak Street": what chrono would read as a time is a house number.
const HOUSE_NUMBER = new RegExp(String.raw`^(?:at[ ]+|@[ ]?)?\d{1,5}[ ](?:[A-Z][\w'.-]*[ ]){1,3}${STREET}\b`);

/** Whether the text starts with a house number and its street ("at 22 Oak Street"). */
export const startsWithHouseNumber = (text: string) => HOUSE_NUMBER.test(text);

// ", Prinzessinnenstraße 19", ", Rue de Rivoli 12": a street and house number after a comma.
const STREET_AND_NUMBER = /^[ ]?\p{Lu}[\p{L}.'-]*(?:[ ][\p{L}.'-]+){0,3}[ ]\d{1,5}[a-z]?(?![\p{L}\d:])/u;
const URL = /\bhttps?:\/\/[^\s<>"')\]]+/gi;
const MEETING_HOST = /zoom\.us|meet\.google\.com|teams\.microsoft\.com|teams\.live\.com|webex\.com|whereby\.com|gotomeeting\.com|meet\.jit\.si|chime\.aws/i;

const isCapitalized = (w: string) => /^[\p{Lu}\p{N}]/u.test(w);

/** The text's links, marked so no date or title rule reads them. */
export function markUrls(scan: TextScan): Array<{ start: number; end: number; url: string }> {
  const urls: Array<{ start: number; end: number; url: string }> = [];
  for (const m of scan.text.matchAll(URL)) {
    const url = trimEndOf(m[0], /[.,;:!?]/);
    urls.push({ start: m.index, end: m.index + url.length, url: scan.original.slice(m.index, m.index + url.length) });
    scan.mark('url', m.index, m.index + url.length);
  }
  return urls;
}

/** Reads a place name starting at `from`; returns its end (exclusive) or -1. */
function readName(scan: TextScan, from: number, lineEnd: number, lenient: boolean): number {
  const text = scan.text;
  const word = /[\p{L}\p{N}][\p{L}\p{N}'&.\-/#]*/uy;
  let i = from;
  let end = -1;
  let words = 0;
  let inAddress = false;
  let afterPossessive = false;
  while (i < lineEnd && words < MAX_WORDS) {
    if (scan.isMarked(i)) break;
    if (text[i] === ',') {
      // "The Loft, 123 Main St" and "123 Main St, Springfield": an address goes on after a comma.
      const rest = text.slice(i + 1, Math.min(lineEnd, i + 80));
      const after = rest.match(/^[ ]?([\p{L}\p{N}][\p{L}\p{N}'.-]*)/u);
      if (!after || scan.isMarked(i + 1 + after[0].length - after[1].length)) break;
      if (!/^\d/.test(after[1]) && !STREET_AND_NUMBER.test(rest) && !(inAddress && isCapitalized(after[1]))) break;
      inAddress = true;
      i += 1 + after[0].length - after[1].length;
      continue;
    }
    if (words > 0 && text[i] === '(') {
      // "Studio 4 (ground floor)": a short qualifier in brackets ends the name.
      const close = qualifierEnd(scan, i, lineEnd);
      if (close > 0) end = close;
      break;
    }
    if (words > 0 && text[i] === '/') {
      // "the Library / Room 110": two places, the second a name too.
      let next = i + 1;
      while (text[next] === ' ') next++;
      if (next >= lineEnd || scan.isMarked(next) || !isCapitalized(text[next])) break;
      i = next;
      continue;
    }
    word.lastIndex = i;
    const m = word.exec(text);
    if (!m) break;
    const w = trimEndOf(m[0], /\./);
    const lower = w.toLowerCase();
    if (words > 0 && STOP.has(lower) && !(INNER.has(lower) && nextIsCapitalized(text, i + m[0].length, lineEnd))) break;
    // "Maria's house", "Jake's garage": after a possessive, one lowercase noun is the place's.
    if (words > 0 && !lenient && !isCapitalized(w) && !afterPossessive && !(INNER.has(lower) && nextIsCapitalized(text, i + m[0].length, lineEnd))) break;
    afterPossessive = words === 0 && /^\p{Lu}.*'s$/u.test(w);
    if (/^\d/.test(w)) inAddress = true;
    words++;
    const abbreviation = /^(?:St|Ave|Rd|Dr|Blvd|Ln|Ct|Pl|Sq|Mt|No)\.$/.test(m[0]);
    end = i + (abbreviation ? m[0].length : w.length);
    i += m[0].length;
    // "in the Auditorium. Doors open at 6:30": a sentence ends the name.
    if (m[0].endsWith('.') && !abbreviation && !/^\p{Lu}\.$/u.test(m[0]) && /^[ ]+\p{Lu}/u.test(text.slice(i, i + 3))) break;
    while (text[i] === ' ' && !scan.isMarked(i)) i++;
  }
  return end;
}

// Words of a bracketed qualifier that says where in a place: "(ground floor)", "(back entrance)".
const WHERE_WORDS = /\b(?:floor|level|wing|building|entrance|side|door|upstairs|downstairs|basement|lobby|hall|room|back|front|patio|rooftop|annex|campus|gate|parking|suite|unit|corner)\b/i;

/** "(ground floor)", "(Building C)", "(3rd floor)"; not "(my treat)". */
const isPlaceQualifier = (inside: string) =>
  inside.length <= 40 && !/[()]/.test(inside) && (/\d/.test(inside) || /(?:^|\s)\p{Lu}/u.test(inside) || WHERE_WORDS.test(inside));

/** The end (after its ")") of a bracketed qualifier at `open`, or -1. */
function qualifierEnd(scan: TextScan, open: number, lineEnd: number): number {
  const close = scan.text.indexOf(')', open);
  if (close < 0 || close >= lineEnd || close - open > 41) return -1;
  return isPlaceQualifier(scan.text.slice(open + 1, close)) && !scan.overlaps(open, close + 1) ? close + 1 : -1;
}

/** Whether the next word is capitalized, past small inner words ("Café de la Paix"). */
function nextIsCapitalized(text: string, from: number, lineEnd: number): boolean {
  const m = text.slice(from, Math.min(lineEnd, from + 40)).match(/^[ ]+([\p{L}\p{N}][\p{L}\p{N}'&]*)(?:[ ]+([\p{L}\p{N}]))?/u);
  if (!m) return false;
  if (isCapitalized(m[1])) return true;
  return INNER.has(m[1].toLowerCase()) && !!m[2] && isCapitalized(m[2]);
}

/** "at Cafe Luna", "in Room 4B", "in the main auditorium", "@ Sweetgreen". */
function afterPreposition(scan: TextScan, line: Line): Place | null {
  const text = scan.text;
  const prep = /(?:^|[\s(,])(?:(at|in|on|via)[ ]+|(@)[ ]*)(?=[\p{L}\p{N}])/giu;
  prep.lastIndex = line.start;
  for (let m = prep.exec(text); m && m.index < line.end; m = prep.exec(text)) {
    const word = (m[1] ?? m[2]).toLowerCase();
    const nameStart = m.index + m[0].length;
    const prepStart = m.index + m[0].indexOf(m[1] ?? m[2]);
    if (scan.isMarked(nameStart) || scan.isMarked(prepStart)) continue;
    const ahead = text.slice(nameStart, Math.min(line.end, nameStart + 120));
    const first = /^[\p{L}\p{N}][\p{L}\p{N}'&.-]*/u.exec(ahead)?.[0] ?? '';
    const firstLower = first.toLowerCase();
    let lenient = false;
    if (DETERMINERS.has(firstLower)) {
      const second = /^[\p{L}\p{N}][\p{L}\p{N}'&.-]*[ ]+([\p{L}\p{N}][\p{L}\p{N}'&-]*)/u.exec(ahead)?.[1]?.toLowerCase();
      if (!second || NOT_PLACES.has(second) || STOP.has(second)) continue;
      lenient = !isCapitalized(second);
    } else if (!isCapitalized(first)) {
      if (!(word !== 'in' && PLACE_WORDS.has(firstLower))) continue;
    } else if (NOT_PLACES.has(firstLower)) {
      continue;
    }
    const end = readName(scan, nameStart, line.end, lenient);
    if (end <= nameStart) continue;
    // "on Main Street", "on Elm St.": after "on", only a street is a place (and a meeting
    // app: "on Zoom", "via Google Meet"; after "via" only that).
    const name = scan.text.slice(nameStart, end);
    if (word === 'on' && !ON_A_STREET.test(name) && !MEETING_APP.test(name)) continue;
    if (word === 'via' && !MEETING_APP.test(name)) continue;
    return { value: scan.original.slice(nameStart, end), start: prepStart, end };
  }
  return null;
}

function streetAddress(scan: TextScan, line: Line): Place | null {
  const slice = scan.text.slice(line.start, line.end);
  for (const m of slice.matchAll(ADDRESS)) {
    const start = line.start + m.index;
    if (scan.overlaps(start, start + m[0].length)) continue;
    return { value: scan.original.slice(start, start + m[0].length), start, end: start + m[0].length };
  }
  return null;
}

/**
 * "JSWorld Conference, April 14-16, Amsterdam", "Review - March 31 - 9 AM - Board Room": in
 * a list of title, date and more (commas, dashes, bars or dots between), a capitalized name
 * after the date is the place.
 */
function listItemAfterDate(scan: TextScan, line: Line): Place | null {
  const items: Array<{ start: number; end: number; blank: string; comma: boolean }> = [];
  const blanked = scan.blanked();
  const slice = scan.text.slice(line.start, line.end);
  let start = line.start;
  for (const sep of [...slice.matchAll(/,|[ ][-|·•][ ]/g), null]) {
    const at = sep ? line.start + sep.index : line.end;
    items.push({ start, end: at, blank: blanked.slice(start, at), comma: sep?.[0] === ',' });
    if (sep) start = at + sep[0].length;
  }
  const dateItem = items.findIndex((it) => scan.overlaps(it.start, it.end, ['date']));
  if (dateItem < 0) return null;
  // A line that starts with its date has its name in the first item after it ("Thu, Mar 26,
  // 6:30pm, Family Math Night, Cafeteria"): the place comes after that.
  const hasLetters = (it: { blank: string }) => /\p{L}/u.test(it.blank);
  const nameItem = items.slice(0, dateItem + 1).some(hasLetters) ? dateItem : items.findIndex((it, i) => i > dateItem && hasLetters(it));
  const after = Math.max(dateItem, nameItem, 0);
  for (let k = items.length - 1; k > after; k--) {
    const item = items[k].blank.trim();
    const from = items[k].start + items[k].blank.length - items[k].blank.trimStart().length;
    const to = from + item.length;
    if (!item || !isPlaceName(item) || scan.overlaps(from, to)) continue;
    // "Student Center, Room 210": the items before it that are places too are part of it
    // (after a comma; a bar or a dash separates the name from the place).
    let first = from;
    for (let j = k - 1; j > after && items[j].comma; j--) {
      const before = items[j].blank.trim();
      const at = items[j].start + items[j].blank.length - items[j].blank.trimStart().length;
      if (!before || !isPlaceName(before) || scan.overlaps(at, at + before.length)) break;
      first = at;
    }
    return { value: scan.original.slice(first, to), start: first, end: to };
  }
  return null;
}

/**
 * A list item that reads as a place: up to six words, the first capitalized, most of them
 * capitalized or numbers ("Town Hall lawn", "Room 4 / Zoom"), or a place word a person
 * writes in lowercase ("gym", "the library"); a bracketed qualifier at the end is part of
 * it ("Main Auditorium (Building C)", "Studio 4 (ground floor)").
 */
function isPlaceName(item: string): boolean {
  let name = item;
  if (name.endsWith(')')) {
    const open = name.lastIndexOf('(');
    if (open > 0 && isPlaceQualifier(name.slice(open + 1, -1))) name = name.slice(0, open);
  }
  const words = name.split(/[\s/]+/).filter(Boolean);
  const lowerWords = words.map((w) => w.toLowerCase());
  if (lowerWords.length <= 2 && PLACE_WORDS.has(lowerWords[lowerWords.length - 1]) && (lowerWords.length === 1 || DETERMINERS.has(lowerWords[0]))) return true;
  if (!words.length || words.length > 6 || !isCapitalized(words[0])) return false;
  const lower = words.filter((w) => !isCapitalized(w) && !INNER.has(w.toLowerCase())).length;
  return lower === 0 || lower < words.length - lower;
}

interface LocationInput {
  scan: TextScan;
  headers: HeaderLine[];
  /** Lines where prose places are looked for: the title line and the date's line. */
  lines: Line[];
  urls: Array<{ start: number; end: number; url: string }>;
}

export function findLocation({ scan, headers, lines, urls }: LocationInput): Place | null {
  const where = headers.find((h) => h.role === 'where' && h.value);
  let place: Place | null = where ? { value: scan.original.slice(where.valueStart, where.end), start: where.start, end: where.end } : null;
  for (const rule of [afterPreposition, streetAddress, listItemAfterDate]) {
    for (const line of lines) {
      place ??= rule(scan, line);
    }
  }
  if (!place && urls.length) {
    const link = urls.find((u) => MEETING_HOST.test(u.url)) ?? urls[0];
    place = { value: link.url, start: link.start, end: link.end };
  }
  if (!place) return null;
  scan.mark('location', place.start, place.end);
  const value = trimEndOf(trimStartOf(place.value.replace(/\s+/g, ' '), /[\s,;:-]/), /[\s,;:-]/);
  return value ? { ...place, value: value.slice(0, MAX_LENGTH) } : null;
}
