import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import Joi from 'joi';
import { compileFastPath, DEFER } from '../../services/gateway/http/joi-fast-path';
import { validatePart } from '../../services/gateway/http/validation';
import { submissionFields } from '../../services/gateway/smart-links/smart-links.schemas';

/**
 * The fast path through a joi schema must answer exactly what joi answers whenever it
 * answers at all (otherwise it defers to joi). joi is the oracle: every object schema of
 * the gateway that the fast path takes is fed generated input, edge cases included, and
 * each accepted value is compared with joi's.
 */
const OPTIONS: Joi.ValidationOptions = { abortEarly: false, convert: true, stripUnknown: false };

function gatewaySchemas(): Array<{ name: string; schema: Joi.ObjectSchema }> {
  const root = path.join(__dirname, '../../services/gateway');
  const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.schemas.ts'));
  const found: Array<{ name: string; schema: Joi.ObjectSchema }> = [];
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(path.join(root, file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) if (Joi.isSchema(value) && value.type === 'object') found.push({ name: `${file}:${name}`, schema: value as Joi.ObjectSchema });
  }
  return found;
}

const keysOf = (schema: Joi.ObjectSchema) => Object.keys((schema.describe() as { keys?: Record<string, unknown> }).keys ?? {});

/** Values that sit on the edges of joi's conversions and of our rules. */
const edgeStrings = [
  '', ' ', '   ', 'a', 'Title', ' padded ', 'x'.repeat(255), 'x'.repeat(256), '😀'.repeat(255), '😀'.repeat(256), 'a\u202Eb', 'a\u2066b', 'bell\u0007', '\uFEFFbom', 'zero\u200Bwidth', 'nul\u0000',
  '30', ' 30 ', '0', '-0', '-1', '1e3', '1E2', '1.5', '30.0', '0x10', '525600', '525601', '9007199254740993', 'NaN', 'Infinity',
  'true', 'false', 'TRUE', ' False ', '1', 'yes', 'on',
  '2027-05-12 15:00', '2027-05-12', '2027-05-12T15:00:00+02:00', '2027-02-30', '2027-05-12T25:00', '10000-01-01',
  'Europe/Berlin', 'europe/berlin', 'UTC', 'Mars/Base', 'America/Argentina/Buenos_Aires', 'x'.repeat(65),
  'https://example.com/', 'not a url', 'ada@example.com', 'ADA@Example.COM', ' ada@example.com ', 'ada@localhost', 'Ada Lovelace', 'queued', 'processed', 'reject', 'all', 'future',
];
const fieldValue = fc.oneof(
  fc.constantFrom(...edgeStrings),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.integer({ min: -2, max: 600_000 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constantFrom(null, [], {}, ['a'], 0, 1),
);

/**
 * Input for a schema: each declared key absent, one of the edge values its own field
 * accepts (found by asking joi), or any value at all; plus fields it does not declare.
 */
function inputFor(schema: Joi.ObjectSchema) {
  const fields = keysOf(schema).map((key) => {
    const field = schema.extract(key).prefs(OPTIONS);
    const accepted = edgeStrings.filter((value) => !field.validate(value).error);
    const value = accepted.length ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...accepted) }, { weight: 3, arbitrary: fieldValue }) : fieldValue;
    return [key, fc.option(value, { nil: undefined, freq: 8 })] as const;
  });
  const extra = fc.dictionary(fc.constantFrom('unknown_field', 'name', 'email'), fieldValue, { maxKeys: 2 });
  return fc.tuple(fc.record(Object.fromEntries(fields)), extra).map(([declared, more]) => {
    const input: Record<string, unknown> = { ...more };
    for (const [key, value] of Object.entries(declared)) if (value !== undefined) input[key] = value;
    return input;
  });
}

const compiled = gatewaySchemas().flatMap(({ name, schema }) => {
  const fast = compileFastPath(schema, OPTIONS);
  return fast ? [{ name, schema, fast }] : [];
});

it('takes the smart-link submission form (the path it exists for), and answers it as joi does', () => {
  expect(compiled.map((c) => c.name)).toContain('smart-links/smart-links.schemas.ts:submissionFields');
  const form = { title: 'Demo', start: '2027-05-12 15:00', duration: '30', timezone: 'europe/berlin', is_all_day: '0', location: 'Video call', name: 'Ada' };
  const fast = compileFastPath(submissionFields, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  const answer = fast(form);
  expect(answer).not.toBe(DEFER);
  expect(answer).toEqual({ ...form, duration: 30, timezone: 'Europe/Berlin', is_all_day: false });
  expect(validatePart(submissionFields, form)).toEqual({ value: answer, errors: {} });
});

it.each(compiled.map((c) => [c.name, c] as const))('%s: whatever the fast path accepts, joi accepts as the same value', (_name, { schema, fast }) => {
  const prepared = schema.prefs(OPTIONS);
  let answered = 0;
  fc.assert(
    fc.property(inputFor(schema), (input) => {
      const answer = fast({ ...input });
      if (answer === DEFER) return;
      answered++;
      const { value, error } = prepared.validate({ ...input });
      expect(error?.details.map((d) => d.type)).toBeUndefined();
      expect(answer).toStrictEqual(value);
    }),
    { numRuns: 3000 },
  );
  // Generated input is often wrong somewhere; a good share must still reach the comparison.
  expect(answered).toBeGreaterThan(100);
});

it('defers what it was not built for: errors, schemas with defaults, and input that is not a plain object', () => {
  const fast = compileFastPath(submissionFields, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(fast({ title: '   ', start: '2027-05-12' })).toBe(DEFER);
  expect(fast({ start: '2027-05-12' })).toBe(DEFER);
  expect(fast({ title: 'a\u202Eb', start: '2027-05-12' })).toBe(DEFER);
  expect(fast([])).toBe(DEFER);
  expect(fast(Object.create({ title: 'T', start: '2027-05-12' }))).toBe(DEFER);
  expect(compileFastPath(Joi.object({ a: Joi.string().default('x') }).unknown(true), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string().allow(null) }).unknown(true), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string() }), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string().min(Joi.ref('b')), b: Joi.number() }).unknown(true), OPTIONS)).toBeNull();
  // joi's answers for what was deferred are the ones users read
  expect(validatePart(submissionFields, { title: '   ', start: 'soon' }).errors).toEqual({ title: ['The title field is required.'], start: [expect.stringContaining('The start field must be a date')] });
});
