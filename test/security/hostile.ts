import fc from 'fast-check';

/**
 * Hostile input for the fuzzing and injection tests: strings that break parsers, databases
 * and templates, and values of every JSON type.
 */

export const SQL_INJECTIONS = [
  "' OR 1=1 --",
  "' OR '1'='1",
  "'; DROP TABLE events; --",
  '"; DROP TABLE calendars; --',
  "1' UNION SELECT uid, title FROM events --",
  "') OR ('a'='a",
  '%',
  '_',
  '%%',
  '\\',
  '\\%',
  "\\'",
  '*',
  "'",
  '$1',
  '::text',
  '%00',
  '\u0000',
  "a\u0000' OR 1=1 --",
  'ǅ ß ﬃ İ',
  '😀',
];

export const TRICKY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\ufeff',
  '\u202e',
  '\u200b',
  '\r\n\r\n',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '../../../../etc/passwd',
  '${7*7}{{7*7}}',
  '0000-01-01',
  '9999-12-31T23:59:59-14:00',
  '2031-02-30',
  'FREQ=SECONDLY;INTERVAL=1',
  'Europe/../../etc',
  '+275760-09-13',
  'evt_AAAAAAAAAAAAAAAA',
  'cal_',
  ...SQL_INJECTIONS,
];

/** Dates at the edges of what a calendar, JavaScript and Postgres can hold. */
export const EDGE_DATES = [
  '0000-01-01',
  '0001-01-01 00:00',
  '0099-12-31T23:00:00Z',
  '0999-12-31',
  '1000-01-01T00:00+14:00',
  '9999-12-31',
  '9999-12-31 23:59',
  '9999-12-31T23:59:59-14:00',
  '2031-02-29',
  '2032-02-29T23:59:59.999999999+18:00',
  '2031-01-01T00:00-18:59',
  '1970-01-01T00:00:00Z',
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 3 }), loneSurrogate, fc.constant('\u0000')), { maxLength: 10 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })).map(([x, y]) => `${x}\u0000${y}`) },
  { weight: 1, arbitrary: fc.constantFrom(300, 5_000, 70_000).chain((n) => fc.constantFrom('a', 'é', '😀', '<', '%', '\u0000').map((c) => c.repeat(n))) },
);

/** An object nested `depth` levels deep (or an array of arrays), as a value. */
export const deeplyNested = fc.tuple(fc.integer({ min: 20, max: 100 }), fc.boolean()).map(([depth, arrays]) => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});

/** JSON text nested far deeper than any value a program builds (10 000 levels). */
export const deeplyNestedJson = fc.tuple(fc.integer({ min: 1000, max: 10_000 }), fc.boolean()).map(([depth, arrays]) =>
  arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
);

/** A hostile value for a field of that name (dates get dates at the edges too). */
export const hostileFor = (name: string): fc.Arbitrary<unknown> =>
  /date|start|end|^at$/.test(name) ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...EDGE_DATES) }, { weight: 1, arbitrary: hostileValue }) : hostileValue;

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MIN_VALUE) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) },
  { weight: 1, arbitrary: deeplyNested },
);

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** encodeURIComponent for any string (a lone surrogate, which it refuses, becomes U+FFFD). */
export const encode = (s: string) => encodeURIComponent(s.replace(LONE, '\ufffd'));

/** Raw bytes for a URL that a client would not normally send: bad escapes, invalid UTF-8. */
export const RAW_URL_PIECES = ['%', '%zz', '%ED%A0%80', '%FF%FE', '%C0%AF', '%00', '%2e%2e%2fx', '%25', '%u0041', '+', '%0d%0aSet-Cookie:x=1'];

/** `.` and `..` segments are resolved by the client (fetch) before sending: another path altogether. */
export const isDotSegment = (segment: string) => /^(?:\.|%2e){1,2}$/i.test(segment);
