/**
 * The extractor's contract: free text in, the fields of an event out, named as in the
 * create body (`POST /api/calendars/{cal}/events`) so a client can post the result as is.
 */
export interface ExtractionInput {
  text: string;
  /** IANA zone the writer lives in; wall-clock times without a zone of their own are read in it. */
  timezone: string;
  /** The moment the text was written: "tomorrow" and "next Tuesday" count from here. */
  referenceDate: Date;
}

export interface ExtractionResult {
  title: string | null;
  description: string | null;
  location: string | null;
  /** Timed: `2026-03-10T13:00:00-04:00` (the event zone's offset on that date). All-day: `2026-04-14`. */
  date_start: string;
  /** Timed: the end instant. All-day: the inclusive last day. */
  date_end: string;
  timezone: string;
  is_all_day: boolean;
  /** RFC 5545 RRULE without the `RRULE:` prefix, e.g. `FREQ=WEEKLY;BYDAY=TU,TH`. */
  recurrence_rule: string | null;
}

export interface Extractor {
  /** Stored with the result, so an operator can tell which extractor answered. */
  readonly name: string;
  extract(input: ExtractionInput): Promise<ExtractionResult>;
}

/** The text holds nothing an event can be made from; stored as the extraction's error. */
export class ExtractionFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtractionFailure';
  }
}

/**
 * Reading the text took longer than EXTRACT_TIMEOUT_MS and was stopped. Stored as the error
 * `extraction_timeout`; like any failure of the text itself, it is not tried again (the same
 * text would take as long).
 */
export class ExtractionTimeout extends ExtractionFailure {
  constructor() {
    super('extraction_timeout');
    this.name = 'ExtractionTimeout';
  }
}

/**
 * The text is in a language the rules do not read (they read English): stored as the error
 * `unsupported_language` rather than a date misread from words of another language.
 */
export class UnsupportedLanguage extends ExtractionFailure {
  constructor() {
    super('unsupported_language');
    this.name = 'UnsupportedLanguage';
  }
}
