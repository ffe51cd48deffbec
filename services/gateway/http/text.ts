import Joi from 'joi';

/**
 * joi strings for free text. Their length limits count characters (Unicode code points),
 * as docs/api.md's "at most 255 characters" means and as Postgres counts them, not UTF-16 code
 * units (in which an emoji is two). The limits keep joi's rule names and error codes
 * (`string.max` and `string.min` with `limit`), so the messages stay the same and the
 * OpenAPI document still says maxLength/minLength, which JSON Schema counts in code points
 * as well. A required one that is only whitespace counts as empty.
 */
interface TextSchema extends Joi.StringSchema<string> {
  /** At most `limit` characters. */
  maxChars(limit: number): this;
  /** At least `limit` characters. */
  minChars(limit: number): this;
  /** Visible text: no control or invisible format characters (HIDDEN_IN_LABELS). */
  visible(): this;
}

interface TextRoot {
  string(): TextSchema;
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/**
 * Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): invisible,
 * they reorder what follows them, so "Invoice \u202Egnp.exe" reads as "Invoice exe.png" in
 * an email subject, a file name or a calendar app. Text in any script displays right without
 * them (the bidi algorithm orders it), so free text refuses them.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * What a label (a title, a name, a location) refuses beyond those: control characters other
 * than tab and line breaks (U+0001–U+0008, U+000B, U+000C, U+000E–U+001F, U+007F–U+009F;
 * U+0000 has its own message everywhere), and invisible format characters that no script
 * needs: word joiner and invisible operators (U+2060–U+2064), the deprecated format
 * controls (U+206A–U+206F), a byte order mark (U+FEFF) and interlinear annotation marks
 * (U+FFF9–U+FFFB). Kept, because writing systems need them and none reverses text: the
 * zero-width space (Thai and Khmer word breaks), zero-width non-joiner and joiner (Persian,
 * Indic scripts, emoji sequences), the left-to-right, right-to-left and Arabic letter marks
 * (punctuation in mixed-direction text) and the soft hyphen. Longer text (descriptions,
 * text to extract from) is pasted from mail and documents, where these turn up harmlessly.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN_IN_LABELS = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u2060-\u2064\u206A-\u206F\uFEFF\uFFF9-\uFFFB]/;

/** Characters in a string: its UTF-16 length less one for each surrogate pair. */
function characterCount(value: string): number {
  return value.length - (value.match(SURROGATE_PAIR)?.length ?? 0);
}

interface LimitRule {
  name: 'max' | 'min';
  operator: '<=' | '>=';
}

function withinLimit(value: string, limit: number, operator: LimitRule['operator']): boolean {
  // A string has no more characters than UTF-16 units: most values are decided without counting.
  if (operator === '<=') return value.length <= limit || characterCount(value) <= limit;
  return value.length >= limit && characterCount(value) >= limit;
}

const limitArg = {
  name: 'limit',
  assert: (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0,
  message: 'must be a non-negative integer',
};

// joi's own max and min do the same with method 'length'; its types omit method and operator.
const limitRule = (name: LimitRule['name'], limit: number) =>
  ({ name, method: 'characters', args: { limit }, operator: name === 'max' ? '<=' : '>=' }) as Joi.AddRuleOptions;

const Text = Joi.extend((joi: Joi.Root) => ({
  type: 'string',
  base: joi.string(),
  messages: {
    'string.bidi': '{{#label}} must not contain bidirectional control characters',
    'string.hidden': '{{#label}} must not contain control or invisible format characters',
  },
  // A required text of nothing but whitespace is as missing as an empty one, and gets the
  // same answer ("The title field is required."). Other values keep their spaces.
  validate(value: unknown, { schema, error }: { schema: Joi.Schema; error: (code: string) => Joi.ErrorReport }) {
    if (typeof value === 'string' && value !== '' && schema.$_getFlag('presence') === 'required' && value.trim() === '') {
      return { value, errors: [error('string.empty')] };
    }
    if (typeof value === 'string' && BIDI_CONTROLS.test(value)) return { value, errors: [error('string.bidi')] };
    return undefined;
  },
  rules: {
    characters: {
      method: false,
      args: [limitArg],
      validate(value: string, helpers: Joi.CustomHelpers, { limit }: { limit: number }, { name, operator }: LimitRule) {
        return withinLimit(value, limit, operator) ? value : helpers.error(`string.${name}`, { limit, value });
      },
    },
    maxChars: {
      method(this: Joi.Schema, limit: number) {
        return this.$_addRule(limitRule('max', limit));
      },
    },
    minChars: {
      method(this: Joi.Schema, limit: number) {
        return this.$_addRule(limitRule('min', limit));
      },
    },
    visible: {
      validate(value: string, helpers: Joi.CustomHelpers) {
        return HIDDEN_IN_LABELS.test(value) ? helpers.error('string.hidden') : value;
      },
    },
  },
})) as TextRoot;

/** A string of at most `max` characters. */
export const text = (max: number): TextSchema => Text.string().maxChars(max);

/** A title, name or location: at most `max` characters, nothing hidden in them. */
export const label = (max: number): TextSchema => text(max).visible();
