/**
 * The text being read, with the phrases already understood marked as spans. Every rule
 * works on a normalized copy of the same length as the original, so an index found in one
 * points at the same words in the other and titles are cut from what the user wrote.
 * A `name` span is hidden from the date reader but stays in the title ("Game night").
 */
export type SpanKind = 'header' | 'url' | 'zone' | 'duration' | 'recurrence' | 'all-day' | 'date' | 'location' | 'name';

interface Span {
  start: number;
  end: number;
  kind: SpanKind;
}

/** Long pastes are read up to here: a subject, a date and a place sit near the top. */
const MAX_SCAN_CHARS = 4000;

/**
 * Same-length rewrites that chrono and the rules below understand better: typographic
 * dashes and spaces, "p.m.", and the weekday abbreviations chrono does not know.
 */
function normalize(text: string): string {
  return text
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u00a0\u2007\u2009\u202f\t]/g, ' ')
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\r/g, ' ')
    .replace(/\b([ap])\.m\.(?=$|[^a-z])/gi, (_m, letter: string) => `${letter}m  `)
    .replace(/\b([ap])\.m(?=$|[^a-z.])/gi, (_m, letter: string) => `${letter}m `)
    .replace(/\b(tue)s\b/gi, (_m, day: string) => `${day} `)
    .replace(/\b(wed)s\b/gi, (_m, day: string) => `${day} `);
}

export class TextScan {
  readonly original: string;
  readonly text: string;
  private readonly marks: Array<SpanKind | undefined>;
  readonly spans: Span[] = [];

  constructor(input: string) {
    this.original = input.length > MAX_SCAN_CHARS ? cutAtBoundary(input, MAX_SCAN_CHARS) : input;
    this.text = normalize(this.original);
    this.marks = new Array(this.text.length);
  }

  /** Marks [start, end) as understood; characters already marked keep their first kind. */
  mark(kind: SpanKind, start: number, end: number): void {
    const from = Math.max(0, start);
    const to = Math.min(this.text.length, end);
    if (to <= from) return;
    for (let i = from; i < to; i++) this.marks[i] ??= kind;
    this.spans.push({ start: from, end: to, kind });
  }

  kindAt(index: number): SpanKind | undefined {
    return this.marks[index];
  }

  isMarked(index: number, kinds?: SpanKind[]): boolean {
    const kind = this.marks[index];
    return kind !== undefined && (!kinds || kinds.includes(kind));
  }

  /** True when some character of [start, end) is marked (with one of `kinds`). */
  overlaps(start: number, end: number, kinds?: SpanKind[]): boolean {
    for (let i = start; i < end; i++) if (this.isMarked(i, kinds)) return true;
    return false;
  }

  /** The normalized text with marked characters blanked (newlines kept, so lines stay lines). */
  blanked(kinds?: SpanKind[]): string {
    let out = '';
    for (let i = 0; i < this.text.length; i++) {
      const ch = this.text[i];
      out += ch !== '\n' && this.isMarked(i, kinds) ? ' ' : ch;
    }
    return out;
  }

  spansOf(kind: SpanKind): Span[] {
    return this.spans.filter((s) => s.kind === kind);
  }
}

/** Cuts at the last line break (or space) before `max`, so no word is split. */
function cutAtBoundary(text: string, max: number): string {
  const head = text.slice(0, max);
  const newline = head.lastIndexOf('\n');
  if (newline > max * 0.75) return head.slice(0, newline);
  const space = head.lastIndexOf(' ');
  return space > max * 0.75 ? head.slice(0, space) : head;
}

/** A line of the text with its position. */
export interface Line {
  start: number;
  end: number;
  text: string;
}

export function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    lines.push({ start, end, text: text.slice(start, end) });
    if (nl === -1) return lines;
    start = nl + 1;
  }
}
