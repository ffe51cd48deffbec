import { trimEndOf, trimStartOf } from '../../../shared/text/trim';
import type { HeaderLine } from './headers';
import type { Line, SpanKind, TextScan } from './text-scan';

/**
 * The event's name. An email's Subject wins (without "Re:", "Invitation:" and Google's
 * "@ date" tail); otherwise it is what remains of the first sentence once the date, time,
 * place, duration, repetition and zone phrases are cut out, with the words that led into
 * them ("on", "at", "from"), filler such as "Reminder:" or "Please join us for", and the
 * verbs that led up to the date ("is happening", "has been moved to"). A name followed by a
 * separator and the time ("Design review - Tuesday 2pm, Room B") ends at the separator.
 */
const MAX_LENGTH = 255;

// Words that only lead into a phrase that was cut ("on" Friday, "at" 3pm, "from" 2 to 5).
const LEAD_INS = new Set(['on', 'at', 'from', 'for', 'by', 'this', 'next', 'starting', 'beginning', 'starts', 'begins', 'until', 'till', 'between', 'during', 'via', '@', 'in', 'every', 'each', 'around', 'about', 'is', 'the']);
// What cannot end a title once what followed it is gone: separators, and these words.
const DANGLING_CHAR = /[\s,;:|/@\-–&+(?]/;
const DANGLING_WORD = /\b(?:on|at|from|to|for|by|with|in|and|or|the|of|this|next|every|each|starting|until|via|is|are|will be|be)$/i;
// Bullets, dashes and emoji before the name ("• — Picture day", "📅 "), the "'s" of a cut
// day ("Tomorrow's staff meeting"), and words that only led into a cut phrase.
const LEADING = /^(?:[^\p{L}\p{N}"'’([#\p{Sc}]+|['’]s\b|\b(?:on|at|from|for|by|in|and)\b)/iu;

const FILLER = [
  /^(?:hi|hello|hey|dear|greetings|good\s+(?:morning|afternoon|evening))\s+(?:all|everyone|everybody|team|folks|friends|y'all|guys|parents|families|neighbors|neighbours)\b\s*[,!:-]?\s*/i,
  /^(?:hi|hello|hey|hiya|yo)\s*[!,.:]+\s*/i,
  // Who the note is for: "All staff:", "Attention parents -".
  /^(?:all|attention|attn:?)\s+(?:staff|parents|families|students|teachers|faculty|employees|members|volunteers)\s*[:!,-]\s*/i,
  // "Happy Halloween!", "Merry Christmas!" once the holiday (the date) is cut.
  /^(?:happy|merry)\s*!+\s*/i,
  // Chat asks: "can we move our 1:1 to…", "want to grab lunch…", "wanna do drinks…".
  /^(?:can|could|shall|should)\s+(?:we|you|i)\s+(?:move|push|reschedule|change|do|have|grab|get|schedule|book)\s+(?:(?:our|the|a|an|my|your|some)\s+)?/i,
  /^(?:do\s+you\s+)?(?:want|wanna)\s+(?:to\s+)?(?:grab|get|do|have)\s+(?:(?:a|an|some)\s+)?/i,
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

/**
 * "is happening", "will be held", "is scheduled for", "has been moved to", "rescheduled to":
 * the words between an event's name and its cut date. Read word by word from the end: a
 * preposition, a particle, the verb, then its auxiliaries. Without an auxiliary only the
 * verbs that never end a name count ("Catch up", "Movie set" stay).
 */
const TRAILING_PREPOSITIONS = new Set(['to', 'for', 'on', 'at', 'until', 'till', 'from', 'in', 'into']);
const TRAILING_PARTICLES = new Set(['place', 'off', 'back', 'up', 'on']);
const AUXILIARIES = new Set(['is', 'are', 'was', 'were', 'will', 'be', 'been', 'being', 'has', 'have', 'had', "'s", 'now', 'still', 'also', 'officially']);
// verb → the particle it needs ('' for none), and whether it counts without an auxiliary.
const TRAILING_VERBS: Record<string, { particle: string; alone: boolean }> = {
  happening: { particle: '', alone: true },
  held: { particle: '', alone: true },
  scheduled: { particle: '', alone: true },
  rescheduled: { particle: '', alone: true },
  moved: { particle: '', alone: true },
  postponed: { particle: '', alone: true },
  pushed: { particle: '', alone: true },
  'pushed back': { particle: 'back', alone: true },
  'moved back': { particle: 'back', alone: true },
  'moved up': { particle: 'up', alone: true },
  planned: { particle: '', alone: false },
  set: { particle: '', alone: false },
  changed: { particle: '', alone: false },
  shifted: { particle: '', alone: false },
  starting: { particle: '', alone: false },
  happen: { particle: '', alone: false },
  happens: { particle: '', alone: true },
  take: { particle: 'place', alone: false },
  takes: { particle: 'place', alone: true },
  taking: { particle: 'place', alone: true },
  kicks: { particle: 'off', alone: true },
  kick: { particle: 'off', alone: false },
  coming: { particle: 'up', alone: true },
  going: { particle: 'on', alone: false },
  meet: { particle: '', alone: false },
  meets: { particle: '', alone: true },
  gather: { particle: '', alone: false },
};

function withoutTrailingVerb(title: string): string {
  const words = title.split(' ');
  const word = (k: number) => trimEndOf(trimStartOf((words[k] ?? '').toLowerCase(), /[^\p{L}']/u), /[^\p{L}]/u);
  let k = words.length - 1;
  if (TRAILING_PREPOSITIONS.has(word(k))) k--;
  let particle = '';
  // A verb that takes its particle ("take place", "kick off"), or takes one or none ("pushed back").
  const withParticle = (w: string, p: string) => TRAILING_VERBS[`${w} ${p}`] ?? (TRAILING_VERBS[w]?.particle === p ? TRAILING_VERBS[w] : undefined);
  if (TRAILING_PARTICLES.has(word(k)) && withParticle(word(k - 1), word(k))) particle = word(k--);
  const verb = particle ? withParticle(word(k), particle) : TRAILING_VERBS[word(k)];
  if (!verb || verb.particle !== particle) return title;
  let first = k;
  while (first > 0 && AUXILIARIES.has(word(first - 1))) first--;
  // "Standup's moved": the auxiliary is the end of the name's last word.
  const clitic = first === k && /'s$/i.test(words[k - 1] ?? '');
  if (first === k && !verb.alone && !clitic) return title;
  if (first === 0) return title;
  const kept = words.slice(0, first);
  if (clitic) kept[kept.length - 1] = kept[kept.length - 1].replace(/'s$/i, '');
  return kept.join(' ');
}

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

const SYMBOL = /^[\p{Extended_Pictographic}\p{So}\uFE0F\u200D]$/u;

/** Without the emoji and symbols at its end ("Bday dinner 🎉"), read a code point at a time. */
function withoutTrailingSymbols(text: string): string {
  const chars = Array.from(text);
  let end = chars.length;
  while (end > 0 && SYMBOL.test(chars[end - 1])) end--;
  return end === chars.length ? text : chars.slice(0, end).join('');
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
    out = trimEndOf(withoutTrailingSymbols(withoutDangling(out)).replace(LEADING, ''), /\./).trim();
    if (out === before) break;
  }
  return out;
}

// "The meeting", "Our annual bake sale", "A quick sync": the article of a sentence about the
// event, not of its name ("The Nutcracker" keeps it).
const ARTICLE_BEFORE_NOUN = /^(?:[Tt]he|[Aa]n?|[Oo]ur|[Mm]y)[ ]+(?=\p{Ll})/u;

function finish(title: string, fromSentence = false): string | null {
  let out = tidy(stripFiller(tidy(title)));
  if (fromSentence) out = tidy(withoutTrailingVerb(out)).replace(ARTICLE_BEFORE_NOUN, '');
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
  const rawOf = (end: number) => {
    let raw = '';
    for (let k = 0; k < end; k++) raw += keep[k] ? scan.original[sentence.start + k] : keep[k - 1] === false ? '' : ' ';
    return raw;
  };
  const cut = cutBeforeTime(scan, sentence, keep);
  return (cut > 0 ? finish(rawOf(cut), true) : null) ?? finish(rawOf(keep.length), true);
}

const TIME_KINDS: SpanKind[] = ['date', 'zone', 'duration', 'all-day', 'recurrence'];
// What separates a name from what follows it: "Social: Friday", "Review - Tuesday", "Fri, 7pm".
const isSeparator = (text: string, k: number) => /[,:;|]/.test(text[k]) || (text[k] === '-' && text[k - 1] === ' ' && text[k + 1] === ' ');

/**
 * Where the name ends when the time comes between it and a separator ("Ceramics class
 * Tuesday 6pm, Studio 4") or right after one ("Design review - Tuesday 2pm, Room B",
 * "Spring Social: Friday March 20, 6-9pm"): whatever follows (a place, a note) is not part
 * of it. "Lunch and learn: Postgres indexes, Wednesday 12:30" keeps its subtitle. Returns the
 * offset in the sentence, or -1.
 */
function cutBeforeTime(scan: TextScan, sentence: Line, keep: boolean[]): number {
  const text = scan.text.slice(sentence.start, sentence.end);
  const isTime = (k: number) => scan.isMarked(sentence.start + k, TIME_KINDS);
  let letters = false;
  for (let k = 0; k < keep.length; ) {
    if (keep[k]) {
      if (letters && isSeparator(text, k)) {
        let next = k + 1;
        while (next < keep.length && text[next] === ' ') next++;
        if (next < keep.length && isTime(next)) return k;
      }
      letters ||= /\p{L}/u.test(text[k]);
      k++;
      continue;
    }
    // A run of cut words (with the spaces between them): the time and its lead-ins.
    let end = k;
    let time = false;
    for (; end < keep.length && (!keep[end] || text[end] === ' '); end++) if (isTime(end)) time = true;
    if (letters && time && end < keep.length && isSeparator(text, end)) return k;
    k = end;
  }
  return -1;
}
