import Joi from 'joi';
import { EVENT_TEXT_CHARS } from '../../../shared/events/limits';
import type { ExtractLlmConfig } from '../../../shared/config/config';
import { formatWithOffset, parseDateInput, resolveDay, resolveInstant } from '../../../shared/calendar/dates';
import { checkRrule } from '../../../shared/calendar/recurrence';
import { canonicalTimeZone } from '../../../shared/calendar/time-zones';
import { type ExtractionInput, ExtractionFailure, type ExtractionResult, type Extractor } from './extractor';

/**
 * The model-based extractor: asks an OpenAI-compatible chat endpoint (OpenAI, a local
 * Ollama or vLLM…) for the fields as JSON, then checks and normalizes the answer with the
 * same rules as the create endpoint. Any problem (network, timeout, a malformed answer)
 * is thrown, for the fallback to catch.
 */
const SYSTEM_PROMPT = [
  'You read free text (a sentence, an email, a calendar invitation) and return the event it describes as one JSON object with exactly these keys:',
  'title (string or null: what the event is, without dates, times, places or filler such as "Reminder:"; an email Subject wins),',
  'description (string or null), location (string or null: a place, address, room or meeting link),',
  'date_start and date_end (local wall-clock time in the event time zone, "YYYY-MM-DDTHH:mm"; for all-day events "YYYY-MM-DD", date_end being the inclusive last day; without an end, one hour after the start),',
  'timezone (IANA name: the zone written in the text, like PT or CET mapped to America/Los_Angeles or Europe/Berlin, else the given timezone),',
  'is_all_day (boolean), recurrence_rule (RFC 5545 RRULE without the "RRULE:" prefix, or null).',
  'Relative dates ("tomorrow", "next Tuesday") count from the given reference time. Answer with the JSON object only.',
].join(' ');

const answerSchema = Joi.object({
  title: Joi.string().max(EVENT_TEXT_CHARS.title).allow(null, '').required(),
  description: Joi.string().max(EVENT_TEXT_CHARS.description).allow(null, '').default(null),
  location: Joi.string().max(EVENT_TEXT_CHARS.location).allow(null, '').required(),
  date_start: Joi.string().max(40).required(),
  date_end: Joi.string().max(40).required(),
  timezone: Joi.string().max(64).required(),
  is_all_day: Joi.boolean().required(),
  recurrence_rule: Joi.string().max(1000).allow(null, '').default(null),
}).unknown(true);

type Fetch = typeof fetch;

export class LlmExtractor implements Extractor {
  readonly name = 'llm';

  constructor(
    private readonly config: ExtractLlmConfig,
    private readonly fetchImpl: Fetch = fetch,
  ) {}

  async extract(input: ExtractionInput): Promise<ExtractionResult> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.config.apiKey) headers.Authorization = `Bearer ${this.config.apiKey}`;
    const reference = formatWithOffset(input.referenceDate.getTime(), input.timezone);
    const res = await this.fetchImpl(this.config.url, {
      method: 'POST',
      headers,
      signal: AbortSignal.timeout(this.config.timeoutMs),
      body: JSON.stringify({
        model: this.config.model,
        temperature: 0,
        response_format: { type: 'json_object' },
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: JSON.stringify({ text: input.text, timezone: input.timezone, reference_time: reference }) },
        ],
      }),
    });
    if (!res.ok) throw new Error(`the model endpoint answered ${res.status}`);
    const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new Error('the model endpoint answered without a message');
    return normalizeAnswer(parseJsonObject(content), input.timezone);
  }
}

/** The JSON object in a model's message (some wrap it in a ```json fence). */
function parseJsonObject(content: string): unknown {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('the model answered no JSON object');
  return JSON.parse(content.slice(start, end + 1));
}

const blankToNull = (v: string | null | undefined) => (v ? v.trim() || null : null);

/** Checks the model's answer like a create body, and writes the dates as the rules do. */
function normalizeAnswer(raw: unknown, requestZone: string): ExtractionResult {
  const { value, error } = answerSchema.validate(raw, { abortEarly: true, convert: true });
  if (error) throw new Error(`the model's answer is not usable: ${error.message}`);
  const zone = canonicalTimeZone(value.timezone) ?? requestZone;
  const start = parseDateInput(value.date_start);
  const end = parseDateInput(value.date_end);
  if (!start || !end) throw new Error("the model's dates are not valid dates");
  let dateStart: string;
  let dateEnd: string;
  if (value.is_all_day) {
    dateStart = resolveDay(start, zone);
    dateEnd = resolveDay(end, zone);
  } else {
    const from = resolveInstant(start, zone).toMillis();
    const to = resolveInstant(end, zone).toMillis();
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error("the model's dates are not valid dates");
    dateStart = formatWithOffset(from, zone);
    dateEnd = formatWithOffset(to, zone);
  }
  if (dateEnd < dateStart && value.is_all_day) throw new Error("the model's end is before its start");
  if (!value.is_all_day && Date.parse(dateEnd) < Date.parse(dateStart)) throw new Error("the model's end is before its start");
  const rule = value.recurrence_rule ? checkRrule(value.recurrence_rule) : null;
  if (rule && !rule.ok) throw new Error(`the model's recurrence rule ${rule.reason}`);
  const title = blankToNull(value.title);
  if (!title && !blankToNull(value.location)) throw new ExtractionFailure('No event found in the text.');
  return {
    title,
    description: blankToNull(value.description),
    location: blankToNull(value.location),
    date_start: dateStart,
    date_end: dateEnd,
    timezone: zone,
    is_all_day: value.is_all_day,
    recurrence_rule: rule?.ok ? rule.rule : null,
  };
}
