import fc from 'fast-check';
import { compiledSchema } from '../../shared/queues/json-schema';
import { smartLinkJob } from '../../shared/queues/smart-link.job';

/** Queue payloads checked by a compiled JSON Schema: strict for producers, lenient for workers, worded as joi words them. */
const schema = compiledSchema<{ a: { b: string[] } }>(
  {
    type: 'object',
    properties: { a: { type: 'object', properties: { b: { type: 'array', items: { type: 'string', maxLength: 3, format: 'abc' } } }, required: ['b'], additionalProperties: false } },
    required: ['a'],
    additionalProperties: false,
  },
  { abc: { test: (v) => /^[abc]*$/.test(v), means: 'made of a, b and c' } },
);

it('refuses unknown fields for producers and lets them through for workers', () => {
  const payload = { a: { b: ['ab'], newer: true } };
  expect(schema.validate(payload).error?.message).toBe('"a" must NOT have additional properties');
  expect(schema.validate(payload, { allowUnknown: true }).error).toBeUndefined();
});

it('names the field as a path and says what a format asks for', () => {
  expect(schema.validate({ a: { b: ['ab', 'xyz'] } }).error?.message).toBe('"a.b[1]" must be made of a, b and c');
  expect(schema.validate({}).error?.message).toBe(`"payload" must have required property 'a'`);
});

it('counts lengths in characters, as the gateway limits them', () => {
  // Three characters outside the BMP: six UTF-16 units.
  const emoji = compiledSchema<string>({ type: 'string', maxLength: 3 });
  expect(emoji.validate('😀😀😀').error).toBeUndefined();
  expect(emoji.validate('😀😀😀😀').error?.message).toBe('"payload" must NOT have more than 3 characters');
});

it("checks a smart-link job's submissions: a title at its limit in characters passes, one more fails", () => {
  const event = { uid: 'abcdefghijklmnop', title: '😀'.repeat(255), description: null, location: null, internal_name: null, is_all_day: false, timezone: 'UTC', date_start: '2030-01-01T10:00:00.000Z', date_end: '2030-01-01T11:00:00.000Z', ends_at: '2030-01-01T11:00:00.000Z', status: 'approved' };
  const job = (title: string) => ({ link: { id: 1, teamId: 2, calendarId: 3 }, submissions: [{ submission: 'abcdefghijklmnop', receivedAt: '2030-01-01T09:00:00Z', event: { ...event, title } }] });
  expect(smartLinkJob.schema.validate(job('😀'.repeat(255))).error).toBeUndefined();
  expect(smartLinkJob.schema.validate(job('😀'.repeat(256))).error?.message).toBe('"submissions[0].event.title" must NOT have more than 255 characters');
  expect(smartLinkJob.schema.validate(job('')).error?.message).toBe('"submissions[0].event.title" must NOT have fewer than 1 characters');
});

it("takes a job's instant exactly when Date reads it back to the same day and time", () => {
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const job = (receivedAt: string) => ({
    link: { id: 1, teamId: 2, calendarId: 3 },
    submissions: [
      {
        submission: 'abcdefghijklmnop',
        receivedAt,
        event: { uid: 'abcdefghijklmnop', title: 'T', description: null, location: null, internal_name: null, is_all_day: false, timezone: 'UTC', date_start: '2030-01-01T10:00:00.000Z', date_end: '2030-01-01T11:00:00.000Z', ends_at: '2030-01-01T11:00:00.000Z', status: 'approved' },
      },
    ],
  });
  // The oracle: the wall time survives a round trip through Date (2030-02-30 rolls over to March, 24:00 to the next day).
  const readsBack = (value: string) => {
    const ms = Date.parse(value);
    return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(value.slice(0, 19));
  };
  const instant = fc
    .tuple(
      fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(1900, 2000, 2024, 2100, 2400)),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 61 }),
      fc.integer({ min: 0, max: 61 }),
      fc.constantFrom('', '.5', '.25', '.000', '.999'),
    )
    .map(([y, mo, d, h, mi, s, ms]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${ms}Z`);
  fc.assert(
    fc.property(instant, (value) => (smartLinkJob.schema.validate(job(value)).error === undefined) === readsBack(value)),
    { numRuns: 5000 },
  );
  for (const [value, ok] of [
    ['2024-02-29T23:59:59.999Z', true],
    ['2023-02-29T10:00:00Z', false],
    ['2100-02-29T10:00:00Z', false],
    ['2000-02-29T10:00:00Z', true],
    ['2030-04-31T10:00:00Z', false],
    ['2030-01-01T24:00:00Z', false],
    ['2030-01-01T10:00:00+00:00', false],
  ] as const) {
    expect([value, smartLinkJob.schema.validate(job(value)).error === undefined]).toEqual([value, ok]);
  }
});
