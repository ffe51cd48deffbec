import * as chrono from 'chrono-node';
import { extraParsers, extraRefiners } from './chrono-extensions';

/**
 * chrono-node's casual English reader, taught what chrono-extensions.ts adds, with its duration patterns ("2 hours, 30 minutes and
 * 5 seconds ago", "in 3 days", "next 2 weeks") spelled so that each text has one reading.
 *
 * chrono joins up to eleven units with `\s{0,5},?(?:\s*and)?\s{0,5}`: the spaces between
 * two units could be split between its two `\s{0,5}` in as many ways as there are spaces,
 * and a run of units that failed just after ("9 m \n 9 m \n …x", "Mon  3 Mon  3 …") was
 * tried in each split of each joiner: 117 s for 8000 characters of "9 m \n ", 8 s of
 * "Mon  3 ". "a couple of" shared spaces the same way, before it and after it. The
 * replacements accept the same texts, but for "couple" (at most three spaces before its
 * unit, not five, and none before it without an "a"), and are linear. The patterns are
 * rewritten where chrono builds them, so what it reads otherwise is unchanged.
 */
const REWRITES: Array<[from: string, to: string]> = [
  [String.raw`\s{0,5},?(?:\s*and)?\s{0,5}`, String.raw`(?:\s*and\s{0,5}|\s{0,5},(?:\s*and)?\s{0,5}|\s{0,10})`],
  [String.raw`a?\s{0,2}couple\s{0,2}(?:of)?`, String.raw`(?:a\s{0,2})?couple(?:\s{0,2}of)?`],
];

interface PatternParser {
  innerPattern(context: chrono.ParsingContext): RegExp;
}

const hasInnerPattern = (parser: object): parser is PatternParser => typeof (parser as Partial<PatternParser>).innerPattern === 'function';

function readerWithLinearDurations(): { reader: chrono.Chrono; rewritten: string[] } {
  const reader = chrono.casual.clone();
  const rewrittenNames: string[] = [];
  reader.parsers = reader.parsers.map((parser) => {
    if (!hasInnerPattern(parser)) return parser;
    const probe = parser.innerPattern(new chrono.ParsingContext('', new Date(), { forwardDate: true }));
    if (!REWRITES.some(([from]) => probe.source.includes(from))) return parser;
    rewrittenNames.push(parser.constructor.name);
    // A parser of its own (chrono.casual's stay as they are), whose pattern is the rewritten
    // one. The same RegExp object for the same original: chrono recompiles when it changes.
    const own: typeof parser = Object.create(parser);
    const rewritten = new Map<RegExp, RegExp>();
    own.innerPattern = (context) => {
      const original = parser.innerPattern.call(own, context);
      let linear = rewritten.get(original);
      if (!linear) {
        let source = original.source;
        for (const [from, to] of REWRITES) source = source.split(from).join(to);
        // eslint-disable-next-line local/static-regexp -- chrono's own pattern with the parts above replaced; the extractor's tests hold its cost
        linear = new RegExp(source, original.flags);
        rewritten.set(original, linear);
      }
      return linear;
    };
    return own;
  });
  // First, so that a reading of the same length as chrono's ("this weekend") is theirs.
  reader.parsers.unshift(...extraParsers);
  reader.refiners.push(...extraRefiners);
  return { reader, rewritten: rewrittenNames };
}

const built = readerWithLinearDurations();
export const chronoReader = built.reader;
/** The parsers whose patterns were rewritten: a test checks chrono still spells its durations so. */
export const rewrittenParsers: readonly string[] = built.rewritten;
