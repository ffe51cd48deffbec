import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * What a queue's contract checks a payload with: a joi schema, or a JSON Schema compiled by
 * `compiledSchema`. Producers check strictly; workers let through fields they do not know
 * (`allowUnknown`), so a newer release's jobs, queued during a rollout, still run.
 */
export interface PayloadSchema<T> {
  validate(value: unknown, options?: { allowUnknown?: boolean }): { error?: { message: string }; value: T };
}

/** Formats a compiled schema may name besides JSON Schema's own: a test of a string, and what it asks for. */
type Formats = Record<string, { test: (value: string) => boolean; means: string }>;

/** The schema with every `additionalProperties: false` dropped: the workers' lenient reading. */
function lenient(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lenient);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema as Record<string, unknown>)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, lenient(value)]),
  );
}

/** The first error, as joi words them: where (`"submissions[0].event.date_start"`), then what is wrong. */
function described(error: ErrorObject | undefined, formats: Formats): string {
  if (!error) return 'the payload is invalid';
  const where = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
  const format = error.keyword === 'format' ? formats[String(error.params.format)] : undefined;
  return `"${where || 'payload'}" ${format ? `must be ${format.means}` : error.message ?? 'is invalid'}`;
}

/**
 * A JSON Schema compiled once into code by ajv, for the payloads of hot queues: joi checks
 * each field through its generic rules, which made the check of a smart-link job a large
 * share of the gateway's and the worker's CPU in a flood; ajv's compiled check costs a
 * small fraction of that (the figures are in docs/benchmarks.md). Lengths
 * (`minLength`, `maxLength`) are counted in characters (code points), as the gateway's limits are.
 */
export function compiledSchema<T>(schema: AnySchema, formats: Formats = {}): PayloadSchema<T> {
  const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
  for (const [name, { test }] of Object.entries(formats)) ajv.addFormat(name, { type: 'string', validate: test });
  const strictCheck = ajv.compile(schema);
  const lenientCheck = ajv.compile(lenient(schema) as AnySchema);
  const run = (check: ValidateFunction, value: unknown) => (check(value) ? { value: value as T } : { value: value as T, error: { message: described(check.errors?.[0], formats) } });
  return { validate: (value, options) => run(options?.allowUnknown ? lenientCheck : strictCheck, value) };
}
