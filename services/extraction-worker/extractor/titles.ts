import { trimEndOf } from '../../../shared/text/trim';
import type { HeaderLine } from './headers';
import type { Line, TextScan } from './text-scan';

/**
 * The event's name. An email's Subject wins (without "Re:", "Invitation:" and Google's
 * "@ date" tail); otherwise it is what remains of the first sentence once the date, time,
 * place, duration, repetition and zone phrases are cut out, with the words that led into
 * them ("on", "at", "from") and filler such as "Reminder:" or "Please join us for".
 */
const MAX_LENGTH = 255;

// Words that only lead into a phrase that was cut ("on" Friday, "at" 3pm, "from" 2 to 5).
const LEAD_INS = new Set(['on', 'at', 'from', 'for', 'by', 'this', 'next', 'starting', 'beginning', 'starts', 'begins', 'until', 'till', 'between', 'during', 'via', '@', 'in', 'every', 'each', 'around', 'about', 'is', 'the']);
// What cannot end a title once what followed it is gone: separators, and these words.
const DANGLING_CHAR = /[\s,;:|/@\-–&+]/;
const DANGLING_WORD = /\b(?:on|at|from|to|for|by|with|in|and|or|the|of|this|next|every|each|starting|until|via|is|are|will be|be)$/i;
const LEADING = /^(?:[\s,;:|/@\-–.]+|\b(?:on|at|from|for|by|in|and|&)\b)/i;

const FILLER = [
  /^(?:just\s+a\s+|a\s+|friendly\s+|quick\s+)?reminders?\b\s*(?:[:\-!]|that\b|about\b|for\b|of\b)?\s*/i,
  /^(?:don'?t|do\s+not)\s+forget\b\s*(?:about\b|to\b|the\b)?\s*[:\-!]?\s*/i,
  /^remember\b\s*(?:to\b|the\b)?\s*[:\-!]?\s*/i,
  /^(?:fyi|note|nb|heads\s+up|psa|important|urgent|update|updated|new)\s*[:\-!]\s*/i,
  /^save\s+the\s+date\b\s*(?:for\b)?\s*[:\-!]?\s*/i,
  /^(?:please\s+)?(?:come\s+)?join\s+(?:us|me)\s+(?:for|at|in)\b\s*/i,
  /^(?:please\s+)?(?:come\s+)?join\s+(?:us|me)\b\s*[:\-!]?\s*/i,
  /^(?:you'?re|you\s+are)\s+(?:cordially\s+)?invited\s*(?:to\b|:)?\s*/i,
  /^(?:we'?d|we\s+would|i'?d|i\s+would)\s+(?:like|love)\s+to\s+invite\s+you\s+to\b\s*/i,
  /^(?:we\s+)?invite\s+you\s+to\b\s*/i,
  /^invitation\s*(?:to\b|:)\s*/i,
  /^please\s+(?:attend|come\s+to)\b\s*/i,
  /^(?:we'?re|we\s+are|i'?m|i\s+am)\s+(?:having|hosting|holding|throwing)\b\s*/i,
  /^(?:there'?s|there\s+is|there\s+will\s+be)\b\s*(?:an?\b)?\s*/i,
  /^(?:let'?s|lets)\s+(?:have|do|grab|get)?\b\s*/i,
  /^(?:i|we)\s+(?:have|have\s+got|'ve\s+got|got)\b\s*(?:an?\b|my\b|our\b)?\s*/i,
];

const SUBJECT_PREFIX = /^(?:(?:re|fw|fwd|aw|wg|tr)\s*:\s*)+/i;
const INVITE_PREFIX = /^(?:updated\s+invitation(?:\s+with\s+note)?|invitation(?:\s+\(updated\))?|new\s+event|accepted|declined|tentatively\s+accepted|tentative|cancell?ed(?:\s+event)?|event|invite)\s*:\s*/i;

function stripFiller(title: string): string {
  let out = title;
  for (let pass = 0; pass < 4; pass++) {
    const before = out;
    for (const pattern of FILLER) out = out.replace(pattern, '');
    if (out !== before) out = out.replace(/^(?:the|an?|our|my)\s+(?=\S)/i, '');
    if (out === before) break;
  }
  return out;
}

/** Without its trailing separators, or else one trailing word that only led into something. */
function withoutDangling(text: string): string {
  const trimmed = trimEndOf(text, DANGLING_CHAR);
  return trimmed !== text ? trimmed : text.replace(DANGLING_WORD, '');
}

function tidy(raw: string): string {
  let out = raw
    .replace(/\s+/g, ' ')
    .replace(/\(\s*\)|\[\s*\]/g, ' ')
    .replace(/(?<!\s)\s+([,;:.!?)])/g, '$1')
    .replace(/([,;:])(?:\s*[,;:])+/g, '$1')
    .trim();
  for (let pass = 0; pass < 8; pass++) {
    const before = out;
    out = trimEndOf(withoutDangling(out).replace(LEADING, ''), /\./).trim();
    if (out === before) break;
  }
  return out;
}

function finish(title: string): string | null {
  let out = tidy(stripFiller(tidy(title)));
  if (!/[\p{L}\p{N}]/u.test(out)) return null;
  if (out.length > MAX_LENGTH) out = out.slice(0, MAX_LENGTH).replace(/(?<!\s)\s+\S*$/, '');
  return out.charAt(0).toUpperCase() + out.slice(1);
}

/** A Subject/Title header cleaned of mail and calendar decorations. */
export function titleFromHeader(header: HeaderLine, scan: TextScan): string | null {
  const value = scan.original
    .slice(header.valueStart, header.end)
    .replace(SUBJECT_PREFIX, '')
    .replace(INVITE_PREFIX, '');
  return finish(withoutGoogleTail(value));
}

/**
 * Google's Subject: "Invitation: Title @ Tue Mar 10, 2026 1pm - 2pm (EDT) (alice@example.com)".
 * Read from the ends with indexOf: as patterns, the address's two sides and the date's
 * spaces and digits could each be divided up many ways before a text was refused.
 */
function withoutGoogleTail(text: string): string {
  let out = text.trimEnd();
  // "(alice@example.com)": no spaces or brackets inside, an @ with something on each side.
  if (out.endsWith(')')) {
    const open = out.lastIndexOf('(');
    const inside = out.slice(open + 1, -1);
    if (open >= 0 && !/[\s()]/.test(inside) && inside.slice(1, -1).includes('@')) out = out.slice(0, open).trimEnd();
  }
  // " @ date": the last @, a space on each side, a digit after it.
  const at = out.lastIndexOf('@');
  if (at > 0 && /\s/.test(out[at - 1]) && /\s/.test(out[at + 1] ?? '') && /\d/.test(out.slice(at + 1))) out = out.slice(0, at).trimEnd();
  return out;
}

// A sentence ends at . ! ? before a capital or the end, but not after "Dr", "St", "Mar"…
const SENTENCE_END =
  /(?<!\b(?:Dr|Mr|Mrs|Ms|St|Ave|Mt|vs|etc|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun|No|[A-Z]))[.!?](?=\s+["'(]?[A-Z0-9]|\s*$)/g;

/** The sentences of a line, as positions. */
export function sentencesOf(scan: TextScan, line: Line): Line[] {
  const out: Line[] = [];
  const text = scan.text.slice(line.start, line.end);
  let start = 0;
  for (const m of text.matchAll(SENTENCE_END)) {
    if (scan.isMarked(line.start + m.index)) continue;
    out.push({ start: line.start + start, end: line.start + m.index + 1, text: text.slice(start, m.index + 1) });
    start = m.index + 1;
  }
  if (start < text.length) out.push({ start: line.start + start, end: line.end, text: text.slice(start) });
  return out.filter((s) => s.text.trim());
}

/** What is left of the sentence once the understood phrases (and their lead-ins) are cut. */
export function titleFromSentence(scan: TextScan, sentence: Line): string | null {
  const keep: boolean[] = [];
  for (let i = sentence.start; i < sentence.end; i++) keep.push(!scan.isMarked(i) || scan.kindAt(i) === 'name');
  // Drop the lead-in words before every cut: "on" Friday, "at" 3pm, "for" 90 minutes.
  for (let k = 0; k < keep.length; k++) {
    if (keep[k] || (k > 0 && !keep[k - 1])) continue;
    let j = k - 1;
    for (let words = 0; words < 2; words++) {
      while (j >= 0 && keep[j] && scan.text[sentence.start + j] === ' ') j--;
      let w = j;
      while (w >= 0 && keep[w] && /[A-Za-z@]/.test(scan.text[sentence.start + w])) w--;
      const word = scan.text.slice(sentence.start + w + 1, sentence.start + j + 1).toLowerCase();
      if (!LEAD_INS.has(word)) break;
      for (let x = w + 1; x <= j; x++) keep[x] = false;
      j = w;
    }
  }
  let raw = '';
  for (let k = 0; k < keep.length; k++) raw += keep[k] ? scan.original[sentence.start + k] : keep[k - 1] === false ? '' : ' ';
  return finish(raw);
}
