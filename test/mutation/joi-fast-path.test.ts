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

/** The gateway's object schemas the fast path takes (compiled inside each test, so that mutation testing sees which test ran what). */
const compiledSchemas = () =>
  gatewaySchemas().flatMap(({ name, schema }) => {
    const fast = compileFastPath(schema, OPTIONS);
    return fast ? [{ name, schema, fast }] : [];
  });

it('takes the smart-link submission form (the path it exists for), and answers it as joi does', () => {
  expect(compiledSchemas().map((c) => c.name)).toEqual(expect.arrayContaining(['smart-links/smart-links.schemas.ts:submissionFields', 'subscribers/subscribers.schemas.ts:subscriberDetailsBody']));
  const form = { title: 'Demo', start: '2027-05-12 15:00', duration: '30', timezone: 'europe/berlin', is_all_day: '0', location: 'Video call', name: 'Ada' };
  const fast = compileFastPath(submissionFields, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  const answer = fast(form);
  expect(answer).not.toBe(DEFER);
  expect(answer).toEqual({ ...form, duration: 30, timezone: 'Europe/Berlin', is_all_day: false });
  expect(validatePart(submissionFields, form)).toEqual({ value: answer, errors: {} });
});

it('for every gateway schema it takes: whatever the fast path accepts, joi accepts as the same value', () => {
  for (const { name, schema, fast } of compiledSchemas()) {
    const prepared = schema.prefs(OPTIONS);
    let answered = 0;
    fc.assert(
      fc.property(inputFor(schema), (input) => {
        const answer = fast({ ...input });
        if (answer === DEFER) return;
        answered++;
        const { value, error } = prepared.validate({ ...input });
        expect([name, error?.details.map((d) => d.type)]).toEqual([name, undefined]);
        expect(answer).toStrictEqual(value);
      }),
      { numRuns: 1500 },
    );
    // Generated input is often wrong somewhere; a good share must still reach the comparison.
    expect([name, answered > 50]).toEqual([name, true]);
  }
});

it('defers what it was not built for: errors, schemas with defaults, and input that is not a plain object', () => {
  const fast = compileFastPath(submissionFields, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(fast({ title: '   ', start: '2027-05-12' })).toBe(DEFER);
  expect(fast({ start: '2027-05-12' })).toBe(DEFER);
  expect(fast({ title: 'a\u202Eb', start: '2027-05-12' })).toBe(DEFER);
  expect(fast(Object.create({ title: 'T', start: '2027-05-12' }))).toBe(DEFER);
  // with no field required, only its shape tells what is not an object
  const optional = compileFastPath(Joi.object({ a: Joi.string() }).unknown(true), OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(optional({})).toEqual({});
  for (const input of [null, undefined, [], ['x'], 'text', 5, true, Object.create(null), Object.create({ a: 'x' }), new Date(0)]) {
    expect([input, optional(input)]).toEqual([input, DEFER]);
  }
  expect(compileFastPath(Joi.object({ a: Joi.string().default('x') }).unknown(true), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string().allow(null) }).unknown(true), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string() }), OPTIONS)).toBeNull();
  expect(compileFastPath(Joi.object({ a: Joi.string().min(Joi.ref('b')), b: Joi.number() }).unknown(true), OPTIONS)).toBeNull();
  // joi's answers for what was deferred are the ones users read
  expect(validatePart(submissionFields, { title: '   ', start: 'soon' }).errors).toEqual({ title: ['The title field is required.'], start: [expect.stringContaining('The start field must be a date')] });
});

it('takes what only describes a field, or what the type applies itself, and answers as joi does', () => {
  const schema = Joi.object({
    a: Joi.string().meta({ x: 1 }).note('n').tag('t').example('e').required(),
    b: Joi.string().replace(/-/g, ' ').trim().lowercase(),
    c: Joi.boolean().truthy('Y').falsy('N').strict(false),
    d: Joi.number().integer(),
  }).unknown(true);
  const fast = compileFastPath(schema, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(fast).not.toBeNull();
  for (const input of [
    { a: 'x', b: ' A-B ', c: 'y', d: 30 },
    { a: 'x', b: 'ok', c: 'n', d: '30', e: [1] },
    { a: 'x', c: true },
  ]) {
    const answer = fast({ ...input });
    expect(answer).not.toBe(DEFER);
    expect(answer).toStrictEqual(schema.prefs(OPTIONS).validate({ ...input }).value);
  }
  // a number joi refuses while converting it (unsafe) is joi's to answer
  expect(fast({ a: 'x', d: '9007199254740993' })).toBe(DEFER);
  expect(compileFastPath(Joi.object({ n: Joi.number() }).unknown(true), OPTIONS)?.({ n: '9007199254740993' })).toBe(DEFER);
  expect(fast({ a: 'x', d: 1.5 })).toBe(DEFER);
  // refused while converting, though the number it reads would pass every later check
  const plainNumber = compileFastPath(Joi.object({ n: Joi.number() }).unknown(true), OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(Joi.number().validate('0.1000000000000000055511151231257827').error?.details[0].type).toBe('number.unsafe');
  expect(plainNumber({ n: '0.1000000000000000055511151231257827' })).toBe(DEFER);
  expect(plainNumber({ n: '0.125' })).toEqual({ n: 0.125 });
  // a rule that fails ends the field, whatever the rules after it would make of the value
  const thenReplaced = compileFastPath(Joi.object({ a: Joi.string().max(1).custom(() => 'x') }).unknown(true), OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(thenReplaced({ a: 'abc' })).toBe(DEFER);
  expect(thenReplaced({ a: 'a' })).toEqual({ a: 'x' });
  // a rule that asks the helpers for more than error() (here a message) is joi's to answer
  const withMessage = Joi.object({ a: Joi.string().custom((v: string, h) => (v === 'bad' ? h.message({ custom: 'no' }) : v)) }).unknown(true);
  const messaging = compileFastPath(withMessage, OPTIONS) as NonNullable<ReturnType<typeof compileFastPath>>;
  expect(messaging({ a: 'bad' })).toBe(DEFER);
  expect(withMessage.validate({ a: 'bad' }).error?.message).toBe('no');
  expect(messaging({ a: 'ok' })).toEqual({ a: 'ok' });
});

it('leaves to joi every schema that uses anything else, and every other way of validating', () => {
  const field = (schema: Joi.Schema) => compileFastPath(Joi.object({ a: schema }).unknown(true), OPTIONS);
  expect(field(Joi.string())).not.toBeNull();
  for (const schema of [
    Joi.string().cache(),
    Joi.string().allow(null),
    Joi.string().invalid('x'),
    Joi.string().default('x'),
    Joi.string().empty(''),
    Joi.string().prefs({ convert: false }),
    Joi.string().prefs({ abortEarly: true }),
    Joi.string().prefs({ convert: true, abortEarly: true }),
    Joi.string().max(3).rule({ warn: true }),
    Joi.string().alter({ x: (s: Joi.Schema) => s }),
    Joi.string().when('b', { is: 1, then: Joi.required() }),
    Joi.date(),
    Joi.array(),
    Joi.object(),
    Joi.any(),
  ]) {
    expect([schema.describe(), field(schema)]).toEqual([schema.describe(), null]);
  }
  const base = Joi.object({ a: Joi.string() }).unknown(true);
  expect(compileFastPath(base, OPTIONS)).not.toBeNull();
  for (const schema of [
    base.cache(),
    base.allow(null),
    base.invalid({}),
    base.min(1),
    base.prefs({ convert: true }),
    base.rename('b', 'a'),
    base.with('a', 'b'),
    base.description('d').default({}),
    Joi.object({ a: Joi.string() }),
    Joi.object({ a: Joi.string() }).unknown(false),
    Joi.object().unknown(true),
    Joi.string(),
    Joi.func().keys({ a: Joi.string() } as never).unknown(true),
  ]) {
    expect([schema.describe(), compileFastPath(schema, OPTIONS)]).toEqual([schema.describe(), null]);
  }
  expect(compileFastPath(base.description('d'), OPTIONS)).not.toBeNull();
  for (const prefs of [{ ...OPTIONS, convert: false }, { ...OPTIONS, stripUnknown: true }, { ...OPTIONS, abortEarly: true }, { ...OPTIONS, presence: 'required' as const }, { ...OPTIONS, noDefaults: true }, { ...OPTIONS, allowUnknown: true }, { abortEarly: false }]) {
    expect([prefs, compileFastPath(base, prefs)]).toEqual([prefs, null]);
  }
});

