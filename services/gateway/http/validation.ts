import Joi from 'joi';
import { parseDateInput } from '../../../shared/calendar/dates';
import { checkRrule } from '../../../shared/calendar/recurrence';
import { canonicalTimeZone } from '../../../shared/calendar/time-zones';
import { type FieldErrors, mergeFieldErrors, validationFailed } from '../../../shared/errors/app-error';
import { type IdPrefix, UID_PATTERN } from '../../../shared/ids/ids';
import { compileFastPath, DEFER } from './joi-fast-path';
import { label, text } from './text';

/**
 * Request validation with joi: every field is checked (abortEarly off) and each failure is
 * turned into the Laravel-style sentence of the 422 body (docs/api.md, "Errors").
 */

const fieldName = (path: string) => path.replace(/_/g, ' ');

function messageFor(detail: Joi.ValidationErrorItem, field: string, optional: boolean): string {
  const name = fieldName(field);
  const ctx = detail.context ?? {};
  switch (detail.type) {
    case 'string.empty':
      return optional ? `The ${name} field must not be empty.` : `The ${name} field is required.`;
    case 'any.required':
      return `The ${name} field is required.`;
    case 'string.base':
      return `The ${name} field must be a string.`;
    case 'string.max':
      return `The ${name} field must not be greater than ${ctx.limit} characters.`;
    case 'string.min':
      return `The ${name} field must be at least ${ctx.limit} characters.`;
    case 'string.email':
      return `The ${name} field must be a valid email address.`;
    case 'string.bidi':
      return `The ${name} field must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069).`;
    case 'string.hidden':
      return `The ${name} field must not contain control or invisible format characters (such as U+0007 or U+FEFF).`;
    case 'string.uri':
    case 'string.uriCustomScheme':
      return `The ${name} field must be a valid URL.`;
    case 'string.pattern.base':
      return `The ${name} field format is invalid.`;
    case 'string.pattern.name':
      // A pattern given a name says what it accepts: "…must be letters, digits and hyphens".
      return `The ${name} field must be ${ctx.name}.`;
    case 'boolean.base':
      return `The ${name} field must be true or false.`;
    case 'number.base':
    case 'number.integer':
    case 'number.unsafe':
      return `The ${name} field must be an integer.`;
    case 'number.min':
      return `The ${name} field must be at least ${ctx.limit}.`;
    case 'number.max':
      return `The ${name} field must not be greater than ${ctx.limit}.`;
    case 'array.base':
      return `The ${name} field must be an array.`;
    case 'array.min':
      return `The ${name} field must have at least ${ctx.limit} item${ctx.limit === 1 ? '' : 's'}.`;
    case 'array.max':
      return `The ${name} field must not have more than ${ctx.limit} items.`;
    case 'object.base':
      return field === 'body' ? 'The request body must be a JSON object.' : `The ${name} field must be an object.`;
    case 'any.only':
      return `The ${name} field must be one of: ${((ctx.valids as unknown[]) ?? []).filter((v) => v !== null && v !== '').join(', ')}.`;
    case 'date.invalid':
      return `The ${name} field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.`;
    case 'timezone.invalid':
      return `The ${name} field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.`;
    case 'rrule.invalid':
      return `The ${name} field must be a valid RRULE: it ${ctx.reason}.`;
    default:
      return detail.message.replace(/"/g, '');
  }
}

/** The schema of the field at `path` (object keys and array items), if it can be told. */
function fieldSchema(schema: Joi.Schema, path: Array<string | number>): Joi.Schema | undefined {
  let current: Joi.Schema | undefined = schema;
  for (const step of path) {
    if (!current) return undefined;
    if (typeof step === 'number') {
      // An array's single item schema (joi keeps them in its `items` term).
      const items: Joi.Schema[] | undefined = (current as unknown as { $_terms: { items?: Joi.Schema[] } }).$_terms.items;
      current = items?.length === 1 ? items[0] : undefined;
    } else {
      try {
        current = current.extract(step);
      } catch {
        return undefined;
      }
    }
  }
  return current;
}

// An enum's "must be one of: …" already says what these would: one message is clearer.
const SAID_BY_ANY_ONLY = new Set(['string.empty', 'string.base']);

/**
 * Joi's error details as field errors (`{"title": ["The title field is required."]}`).
 * With the schema, an optional field sent empty is told it must not be empty rather than
 * that it is required.
 */
export function toFieldErrors(error: Joi.ValidationError | undefined, schema?: Joi.Schema): FieldErrors {
  const out: FieldErrors = {};
  const details = error?.details ?? [];
  const enumFailed = new Set(details.filter((d) => d.type === 'any.only').map((d) => d.path.join('.')));
  for (const detail of details) {
    // A key named "" is named so (an empty name could not be told from none).
    const field = detail.path.length ? detail.path.join('.') || '""' : 'body';
    if (SAID_BY_ANY_ONLY.has(detail.type) && enumFailed.has(detail.path.join('.'))) continue;
    const optional = detail.type === 'string.empty' && schema !== undefined && fieldSchema(schema, detail.path)?.$_getFlag('presence') !== 'required';
    (out[field] ??= []).push(messageFor(detail, field, optional));
  }
  return out;
}

interface Validated<T> {
  value: T;
  errors: FieldErrors;
}

/**
 * The error codes of our custom field types get their fallback texts here, on the root,
 * rather than through `.messages()` on each field: joi merges a field's own preferences on
 * every validation, and these fields sit on the hottest path (smart-link submissions).
 * The texts users see come from messageFor above.
 */
const OPTIONS: Joi.ValidationOptions = {
  abortEarly: false,
  convert: true,
  stripUnknown: false,
  messages: { 'timezone.invalid': 'invalid timezone', 'date.invalid': 'invalid date', 'rrule.invalid': 'invalid RRULE' },
};

/** Where a schema declares strings and arrays: the keys of its objects, the items and the most items of its arrays. */
interface Shape {
  keys?: Record<string, Shape>;
  items?: Shape;
  /** An array's most items (its max rule). */
  max?: number;
}

interface Description {
  type?: string;
  keys?: Record<string, Description>;
  items?: Description[];
  rules?: Array<{ name: string; args?: { limit?: number } }>;
}

const shapes = new WeakMap<Joi.Schema, Shape>();

function shapeOf(d: Description): Shape {
  if (d.type === 'object' && d.keys) return { keys: Object.fromEntries(Object.entries(d.keys).map(([k, v]) => [k, shapeOf(v)])) };
  if (d.type === 'array') {
    const max = d.rules?.find((r) => r.name === 'max')?.args?.limit;
    return { ...(d.items?.length === 1 ? { items: shapeOf(d.items[0]) } : {}), ...(max !== undefined ? { max } : {}) };
  }
  return {};
}

function shapeFor(schema: Joi.Schema): Shape {
  let shape = shapes.get(schema);
  if (!shape) {
    shape = shapeOf(schema.describe() as Description);
    shapes.set(schema, shape);
  }
  return shape;
}

/**
 * Arrays over their maximum, found before any item is looked at: a body of 100,000 made-up
 * invitees is refused for its size alone, in one pass over the declared shape, instead of
 * validating (and answering an error for) every item. Only declared arrays are measured,
 * and an array's items are walked only when it is within its size.
 */
function oversizedArrays(schema: Joi.Schema, input: unknown): FieldErrors {
  const out: FieldErrors = {};
  const visit = (s: Shape, value: unknown, path: string[]) => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      if (s.max !== undefined && value.length > s.max) {
        const field = path.length ? path.join('.') : 'body';
        out[field] = [`The ${fieldName(field)} field must not have more than ${s.max} items (it has ${value.length}).`];
        return;
      }
      if (s.items) value.forEach((item, i) => visit(s.items as Shape, item, [...path, String(i)]));
      return;
    }
    for (const [key, child] of Object.entries(s.keys ?? {})) {
      if (Object.hasOwn(value, key)) visit(child, (value as Record<string, unknown>)[key], [...path, key]);
    }
  };
  visit(shapeFor(schema), input, []);
  return out;
}

/**
 * Postgres text cannot hold U+0000, so a declared field carrying one is refused like any
 * other bad value instead of failing later in a query. Unknown fields are ignored (they are
 * never stored), and only the declared shape is walked, however deep the input.
 */
function nullCharacterErrors(schema: Joi.Schema, input: unknown): FieldErrors {
  const shape = shapeFor(schema);
  const out: FieldErrors = {};
  const visit = (s: Shape, value: unknown, path: string[]) => {
    if (typeof value === 'string') {
      if (value.includes('\u0000')) {
        const field = path.length ? path.join('.') : 'body';
        (out[field] ??= []).push(`The ${fieldName(field)} field must not contain a null character.`);
      }
      return;
    }
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      if (s.items) value.forEach((item, i) => visit(s.items as Shape, item, [...path, String(i)]));
      return;
    }
    for (const [key, child] of Object.entries(s.keys ?? {})) {
      if (Object.hasOwn(value, key)) visit(child, (value as Record<string, unknown>)[key], [...path, key]);
    }
  };
  visit(shape, input, []);
  return out;
}

// Most GETs carry no query at all; the answer for an empty input never changes, so it is
// computed once per schema (a copy is handed out, since handlers may not expect sharing).
const emptyResults = new WeakMap<Joi.Schema, Validated<unknown>>();

const isEmptyObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

// Each schema with OPTIONS applied once: joi merges options given to validate() on every call.
const prepared = new WeakMap<Joi.Schema, Joi.Schema>();

function withOptions(schema: Joi.Schema): Joi.Schema {
  let ready = prepared.get(schema);
  if (!ready) {
    ready = schema.prefs(OPTIONS);
    prepared.set(schema, ready);
  }
  return ready;
}

// Each object schema's fast path for input it accepts (null: joi alone; see joi-fast-path.ts).
const fastPaths = new WeakMap<Joi.Schema, ReturnType<typeof compileFastPath>>();

function fastPathOf(schema: Joi.Schema): ReturnType<typeof compileFastPath> {
  let fast = fastPaths.get(schema);
  if (fast === undefined) {
    fast = compileFastPath(schema, OPTIONS);
    fastPaths.set(schema, fast);
  }
  return fast;
}

export function validatePart<T>(schema: Joi.Schema | undefined, input: unknown): Validated<T> {
  if (!schema) return { value: input as T, errors: {} };
  if (isEmptyObject(input)) {
    let cached = emptyResults.get(schema);
    if (!cached) {
      const { value, error } = withOptions(schema).validate({});
      cached = { value, errors: toFieldErrors(error, schema) };
      emptyResults.set(schema, cached);
    }
    return { value: structuredClone(cached.value) as T, errors: cached.errors };
  }
  const fast = fastPathOf(schema);
  if (fast) {
    // A schema the fast path takes declares no arrays: none can be oversized.
    const value = fast(input);
    if (value !== DEFER) {
      const nulls = nullCharacterErrors(schema, input);
      if (!Object.keys(nulls).length) return { value: value as T, errors: nulls };
    }
  } else {
    const oversized = oversizedArrays(schema, input);
    if (Object.keys(oversized).length) return { value: input as T, errors: oversized };
  }
  const { value, error } = withOptions(schema).validate(input);
  return { value: value as T, errors: mergeFieldErrors(toFieldErrors(error, schema), nullCharacterErrors(schema, input)) };
}

/** Throws one 422 holding every error from every part. */
export function throwIfErrors(...maps: FieldErrors[]): void {
  const merged = mergeFieldErrors(...maps);
  if (Object.keys(merged).length) throw validationFailed(merged);
}

// ---- reusable field types -------------------------------------------------------------

/** Booleans as docs/api.md says: true, false, 1, 0 and the strings of those. */
export const bool = () => Joi.boolean().truthy(1, '1').falsy(0, '0').strict(false);

/** A zone name in any case; the value is its IANA spelling (`europe/berlin` → `Europe/Berlin`). */
export const timezone = () =>
  Joi.string()
    .max(64)
    .custom((value: string, helpers) => canonicalTimeZone(value) ?? helpers.error('timezone.invalid'))
    .description('IANA time zone name, e.g. America/New_York (any case; answered in the IANA spelling)');

export const dateInput = () =>
  Joi.string()
    .max(40)
    .custom((value: string, helpers) => (parseDateInput(value) ? value : helpers.error('date.invalid')))
    .description('ISO 8601 date-time with or without offset, `YYYY-MM-DD HH:mm[:ss]`, or a bare date');

/** A calendar day, `YYYY-MM-DD`, that exists (not 2025-02-30): the value is the same text. */
export const utcDay = () =>
  Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/, { name: 'a day, YYYY-MM-DD' })
    .custom((value: string, helpers) => {
      const at = new Date(`${value}T00:00:00Z`);
      // Date rolls 2025-02-30 over to 2 March: only a day that reads back the same exists.
      return !Number.isNaN(at.getTime()) && at.toISOString().startsWith(value) ? value : helpers.error('date.invalid');
    }, 'a real day')
    .description('A UTC day, YYYY-MM-DD');

export const rrule = () =>
  Joi.string()
    .max(1000)
    .custom((value: string, helpers) => {
      const result = checkRrule(value);
      return result.ok ? result.rule : helpers.error('rrule.invalid', { reason: result.reason });
    })
    .description('RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=TU;COUNT=10 (an RRULE: prefix is accepted)');

/** Free text, and one-line labels, of at most `max` characters (code points, not UTF-16 units). */
export { label, text };

/**
 * A person's name (invitee, RSVP, subscriber): a label on one line. Line breaks and other
 * control characters have no place in a name that can end up in a mail header or an
 * ATTENDEE's CN.
 */
export const personName = () =>
  label(255)
    .trim()
    .pattern(/^[^\u0000-\u001f\u007f]*$/, { name: 'on one line, without control characters' }); // eslint-disable-line no-control-regex

/**
 * An email address as people type it: trimmed, at most 254 characters, and nothing
 * invisible (format characters such as U+202E or a zero-width space, control characters),
 * which joi's email rule lets through at the start of the local part and which would end
 * up in a To: header.
 */
export const emailAddress = () =>
  Joi.string()
    .trim()
    .max(254)
    .email({ tlds: false })
    .pattern(/^[^\p{Cc}\p{Cf}]*$/u, { name: 'an address without invisible or control characters' });

export const httpUrl = () => Joi.string().max(2048).uri({ scheme: ['http', 'https'] });

export const shortLink = () => Joi.string().max(50).pattern(/^[a-zA-Z0-9-]+$/, { name: 'letters, digits and hyphens only' });

/** A page's `cursor`: only what a previous page gave as `next_cursor`. */
const cursorName = { name: 'the next_cursor of a previous page' };

/** The `cursor` query parameter of every listing: an opaque next_cursor (see http/cursor.ts). */
export const cursorParam = () => Joi.string().max(200).pattern(/^[A-Za-z0-9_-]+$/, cursorName).description('next_cursor of the previous page');

/**
 * Path parameters, declared for the OpenAPI document with their exact form (the services
 * find the row, and answer 404 for an id that names none, whatever its form). The patterns
 * also tell path templates apart for tools that match them: `/c/{uid}` never matches
 * `/c/abc.ics`, `/api/events/{evt}` never the word `extract`.
 */
const ID_PATTERNS: Record<IdPrefix, RegExp> = {
  cal_: /^cal_[0-9A-Za-z]{16}$/,
  evt_: /^evt_[0-9A-Za-z]{16}$/,
  sl_: /^sl_[0-9A-Za-z]{16}$/,
  sls_: /^sls_[0-9A-Za-z]{16}$/,
  ext_: /^ext_[0-9A-Za-z]{16}$/,
  inv_: /^inv_[0-9A-Za-z]{16}$/,
  rsvp_: /^rsvp_[0-9A-Za-z]{16}$/,
  sub_: /^sub_[0-9A-Za-z]{16}$/,
  dk_: /^dk_[0-9A-Za-z]{16}$/,
  team_: /^team_[0-9A-Za-z]{16}$/,
  usr_: /^usr_[0-9A-Za-z]{16}$/,
  wh_: /^wh_[0-9A-Za-z]{16}$/,
  whd_: /^whd_[0-9A-Za-z]{16}$/,
  tok_: /^tok_[0-9A-Za-z]{16}$/,
};

export const idParam = (prefix: IdPrefix) => Joi.string().pattern(ID_PATTERNS[prefix]).required().description(`${prefix}… public id`);

/** A public page's or feed's uid: the public id without its prefix (`cal_`, `evt_`). */
export const uidParam = (of: 'event' | 'calendar') =>
  Joi.string()
    .pattern(UID_PATTERN)
    .required()
    .description(`The ${of} uid (its public id without ${of === 'event' ? 'evt_' : 'cal_'})`);
