import type Joi from 'joi';

/**
 * A faster way through a joi object schema for input it accepts, with the schema still the
 * only place the rules live. joi's general machinery (preferences merged per field, a state
 * and helpers per value, tracing, error reports) costs several microseconds for a form of
 * eight fields, on a path that takes every smart-link submission. For a flat object of
 * strings, numbers and booleans whose fields use only what is listed below, this runs the
 * same steps joi runs for each field (coerce, base type, each rule, in joi's order) by
 * calling the type's and the rules' own functions. The moment any of them reports a
 * problem, or the input is anything it was not built for, it gives up and joi validates
 * the input from the start: every error, every message and every unusual value is joi's.
 * What it answers when it does not give up is what joi answers (test/mutation/joi-fast-path.test.ts).
 */
export const DEFER = Symbol('defer to joi');

type Fast = (input: unknown) => Record<string, unknown> | typeof DEFER;

/** What a field may have for the fast path to take it; anything else leaves the schema to joi. */
const FIELD_TYPES = new Set(['string', 'number', 'boolean']);
const FIELD_FLAGS = new Set(['presence', 'description']);
/**
 * Terms that describe (metas, notes…) or that the type's own functions apply (a boolean's
 * truthy and falsy values, a string's replacements, in their coerce). A field or object
 * with a non-empty term not listed here is left to joi.
 */
const HANDLED_TERMS = new Set(['metas', 'notes', 'tags', 'examples', 'replacements', 'truthy', 'falsy']);

interface Internals {
  type: string;
  _flags: Record<string, unknown>;
  _preferences: object | null;
  _cache: unknown;
  _valids: unknown;
  _invalids: unknown;
  _rules: Array<{ method: string; name: string; args: unknown; _resolve: unknown[]; warn?: boolean }>;
  $_terms: Record<string, unknown[] | null>;
  _definition: {
    prepare?: unknown;
    coerce?: { from?: string[]; method: (value: unknown, helpers: unknown) => { value: unknown; errors?: unknown } | undefined };
    validate: (value: unknown, helpers: unknown) => { value: unknown; errors?: unknown } | undefined;
    rules: Record<string, { convert?: boolean; validate: (value: unknown, helpers: unknown, args: unknown, rule: unknown) => unknown }>;
  };
}

const termsOnly = (s: Internals, allowed: Set<string>) => Object.entries(s.$_terms).every(([name, term]) => allowed.has(name) || !term?.length);

/** A field's own preferences, when they only repeat what validation runs with (`strict(false)`: convert). */
const samePreferences = (own: object | null | undefined, prefs: Joi.ValidationOptions) =>
  !own || Object.entries(own).every(([key, value]) => key === 'convert' && value === prefs.convert);

function fieldSupported(s: Internals, prefs: Joi.ValidationOptions): boolean {
  if (!FIELD_TYPES.has(s.type) || !samePreferences(s._preferences, prefs) || s._cache || s._valids || s._invalids || s._definition.prepare) return false;
  if (!Object.keys(s._flags).every((flag) => FIELD_FLAGS.has(flag)) || !termsOnly(s, HANDLED_TERMS)) return false;
  return s._rules.every((rule) => rule._resolve.length === 0 && !rule.warn);
}

/**
 * What `error()` answers here instead of joi's report: the field gave up. A type or rule
 * that asks the helpers for anything else (warnings, messages) throws, and the whole input
 * is handed to joi.
 */
const GAVE_UP = Symbol('gave up');
const giveUp = () => GAVE_UP;

function compileField(s: Internals, prefs: Joi.ValidationOptions): (value: unknown) => unknown {
  const def = s._definition;
  const required = s._flags.presence === 'required';
  const coerce = def.coerce;
  const rules = s._rules.filter((rule) => !def.rules[rule.method].convert);
  // One per field, its `original` set for each value: validation never runs two at once.
  const helpers = { schema: s, prefs, original: undefined as unknown, error: giveUp };
  return (original) => {
    if (original === undefined) return required ? GAVE_UP : undefined;
    helpers.original = original;
    let value: unknown = original;
    if (coerce && (!coerce.from || coerce.from.includes(typeof value))) {
      const coerced = coerce.method(value, helpers);
      if (coerced) {
        if (coerced.errors) return GAVE_UP;
        value = coerced.value;
      }
    }
    const base = def.validate(value, helpers);
    if (base) {
      if (base.errors) return GAVE_UP;
      value = base.value;
    }
    for (const rule of rules) {
      const result = def.rules[rule.method].validate(value, helpers, rule.args, rule);
      if (result === GAVE_UP) return GAVE_UP;
      value = result;
    }
    return value;
  };
}

/**
 * The fast path of an object schema validated with `prefs`, or null when the schema uses
 * anything it does not handle (then joi alone validates it). Only `convert` preferences
 * are taken, with every error reported: what validatePart uses.
 */
export function compileFastPath(schema: Joi.Schema, prefs: Joi.ValidationOptions): Fast | null {
  const s = schema as unknown as Internals;
  if (s.type !== 'object' || s._preferences || s._cache || s._valids || s._invalids || s._rules.length) return null;
  if (prefs.convert !== true || prefs.stripUnknown || prefs.abortEarly !== false || prefs.presence !== undefined || prefs.noDefaults || prefs.allowUnknown) return null;
  if (!Object.keys(s._flags).every((flag) => flag === 'unknown' || flag === 'description') || s._flags.unknown !== true) return null;
  if (!termsOnly(s, new Set(['keys', ...HANDLED_TERMS])) || !s.$_terms.keys?.length) return null;
  const keys = s.$_terms.keys as unknown as Array<{ key: string; schema: Internals }>;
  if (!keys.every((child) => fieldSupported(child.schema, prefs))) return null;
  const fields = keys.map((child) => ({ key: child.key, check: compileField(child.schema, prefs) }));
  return (input) => {
    // A plain object only (not null, an array, a string, or an object of another prototype)
    if (Object.getPrototypeOf(input ?? 0) !== Object.prototype) return DEFER;
    const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    try {
      for (const { key, check } of fields) {
        const item = out[key];
        const value = check(item);
        if (value === GAVE_UP) return DEFER;
        if (value !== undefined) out[key] = value;
        else if (item !== undefined) return DEFER;
      }
    } catch {
      return DEFER;
    }
    return out;
  };
}
