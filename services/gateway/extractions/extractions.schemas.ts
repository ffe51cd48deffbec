import Joi from 'joi';
import { dateInput, idParam, text, timezone } from '../http/validation';

/** `POST /api/events/extract` (docs/extraction.md). */
export interface ExtractInput {
  text: string;
  timezone?: string;
  reference_date?: string;
}

export const extractBody = Joi.object({
  text: text(8000)
    .trim()
    .minChars(10)
    .required()
    .description('The free text in English: a sentence, an email, a pasted invitation (10–8000 characters, trimmed; an emoji counts as one). Another language ends `failed` with `unsupported_language`'),
  // Optional, so an empty one is as if not given (as smart-link form fields are).
  timezone: timezone()
    .empty('')
    .description("IANA zone the text's times are in unless it names one. Default (also for an empty string): the team's oldest calendar's zone, else UTC"),
  reference_date: dateInput().description('When the text was written ("tomorrow" counts from here). Without an offset: wall time in timezone. Default: now'),
}).unknown(true);

export const extractQuery = Joi.object({
  wait: Joi.number().integer().min(0).max(10).default(0).description('Seconds (0–10) to wait for the result: 200 with it when ready in time, else 202'),
}).unknown(true);

export const extractionParams = Joi.object({ ext: idParam('ext_') });

const offsetDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
const isoMicros = () => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

/** The result, in the create body's field names: it can be posted to the create endpoint as is. */
const extractionResultSchema = Joi.object({
  title: Joi.string().allow(null).required().description('null when the text names nothing; set one before posting'),
  description: Joi.string().allow(null).required(),
  location: Joi.string().allow(null).required(),
  date_start: Joi.alternatives()
    .try(Joi.string().pattern(offsetDateTime), Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/))
    .required()
    .description('Timed: with the event zone’s offset on that date (2026-03-10T13:00:00-04:00). All-day: the first day (2026-04-14)'),
  date_end: Joi.alternatives()
    .try(Joi.string().pattern(offsetDateTime), Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/))
    .required()
    .description('Timed: the end. All-day: the inclusive last day'),
  timezone: Joi.string().required().description('IANA zone of the event: a zone written in the text (PT → America/Los_Angeles) wins over the request’s'),
  is_all_day: Joi.boolean().required(),
  recurrence_rule: Joi.string().allow(null).required().description('RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=TU,TH'),
}).meta({ title: 'ExtractionResult' });

export const extractionSchema = Joi.object({
  id: Joi.string().pattern(/^ext_/).required(),
  status: Joi.string().valid('pending', 'completed', 'failed').required(),
  result: extractionResultSchema.allow(null).required().description('Set when completed'),
  error: Joi.string()
    .allow(null)
    .required()
    .description(
      'Why it failed, when failed: a sentence ("No date or time found in the text."); `unsupported_language` when the text is not in English, the one language the extractor reads (German, French and Spanish are told apart by their common words); or `extraction_timeout` when reading the text took longer than EXTRACT_TIMEOUT_MS (not retried)',
    ),
  created_at: isoMicros().required(),
  completed_at: isoMicros().allow(null).required(),
}).meta({ title: 'Extraction' });

export const pendingExtractionSchema = Joi.object({
  data: Joi.object({
    id: Joi.string().pattern(/^ext_/).required(),
    status: Joi.string().valid('pending').required(),
  }).required(),
});
