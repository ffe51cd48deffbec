import type { Locale } from '../i18n/translations';
/**
 * The one error type the service raises on purpose. The HTTP layer maps it to the JSON
 * shapes of docs/api.md; `body` holds safe extra fields (never SQL, never a stack).
 */
export type FieldErrors = Record<string, string[]>;

type ErrorCode =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'event_limit_exceeded'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'gone'
  | 'rate_limited'
  | 'mail_quota_exceeded'
  | 'unavailable';

export class AppError extends Error {
  /**
   * The whole HTML page a browser gets instead of the generic error page (public addresses
   * only): as it is, or made in the language the request's page is shown in.
   */
  page?: string | ((locale: Locale) => string);
  /** The key the message is answered under: `message`, except where the contract keeps `error`. */
  messageKey: 'message' | 'error' = 'message';

  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** A browser on a public page sees `html` (the form again, the lock page) instead of the generic error page. */
  withPage(page: string | ((locale: Locale) => string)): this {
    this.page = page;
    return this;
  }
}

const CODE_OF_STATUS = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'unavailable',
} as const satisfies Record<number, ErrorCode>;

/**
 * What an error is answered with as JSON, wherever it is answered (the gateway, its ingest
 * path, a worker's ops server): an AppError's status, headers and `{"message"}` (or the
 * contract's `{"error"}`) with its extra fields; anything not raised on purpose is a 500
 * that says nothing of its cause. Never cached: a cache must not keep a refusal.
 */
export function errorJson(err: unknown): { status: number; headers: Record<string, string>; json: Record<string, unknown>; code: string } {
  if (!(err instanceof AppError)) return { status: 500, headers: { 'Cache-Control': 'no-store' }, json: { message: 'Server Error' }, code: 'server_error' };
  return { status: err.status, headers: { ...err.headers, 'Cache-Control': 'no-store' }, json: { [err.messageKey]: err.message, ...err.body }, code: err.code };
}

/** An error of a given status and message, its code the status's own. */
export const httpError = (status: keyof typeof CODE_OF_STATUS, message: string) => new AppError(CODE_OF_STATUS[status], status, message);

export const badRequest = (message: string) => new AppError('bad_request', 400, message);

export const unauthenticated = () =>
  new AppError('unauthenticated', 401, 'Unauthenticated.', {}, { 'WWW-Authenticate': 'Bearer' });

export const forbidden = (message = 'This action is unauthorized.') => new AppError('forbidden', 403, message);

export const notFound = (what = 'Resource') => new AppError('not_found', 404, `${what} not found.`);

export const conflict = (message: string, body: Record<string, unknown> = {}) =>
  new AppError('conflict', 409, message, body);

/** Bytes as a person reads a limit: 8 KB, 64 KB, 1 MB (1024 to a KB). */
const sizeText = (bytes: number) => (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${Math.round(bytes / 1024)} KB`);

/** The message of a 413: the limit that was passed, when known. */
const tooLargeMessage = (limitBytes?: number) =>
  limitBytes ? `The request body is larger than this endpoint takes: at most ${sizeText(limitBytes)}.` : 'The request body is too large.';

export const payloadTooLarge = (limitBytes?: number) => new AppError('payload_too_large', 413, tooLargeMessage(limitBytes));

export const unsupportedMediaType = (accepted: string) =>
  new AppError('unsupported_media_type', 415, `Unsupported content type: send ${accepted}.`);

export const unavailable = (retryAfterSeconds = 5) =>
  new AppError('unavailable', 503, 'Service temporarily unavailable.', {}, { 'Retry-After': String(retryAfterSeconds) });

/** The message of every 429. */
const TOO_MANY_ATTEMPTS = 'Too Many Attempts.';

/** A 429; `Retry-After` is set here, or already on the response by the limiter's headers. */
export const tooManyRequests = (retryAfterSeconds?: number, headers: Record<string, string> = {}) =>
  new AppError('rate_limited', 429, TOO_MANY_ATTEMPTS, {}, retryAfterSeconds === undefined ? headers : { ...headers, 'Retry-After': String(retryAfterSeconds) });

/** A 422 lists this many fields' errors at most; its message counts every error. */
const MAX_LISTED_FIELDS = 20;

/** 422 with the failing fields (the first MAX_LISTED_FIELDS); the message is the first error plus a count of the rest. */
export function validationFailed(errors: FieldErrors): AppError {
  const all = Object.values(errors).flat();
  const first = all[0] ?? 'The given data was invalid.';
  const rest = all.length - 1;
  const message = rest > 0 ? `${first} (and ${rest} more error${rest === 1 ? '' : 's'})` : first;
  const fields = Object.keys(errors);
  // Every field is checked; the answer names the first few, so a body of a thousand bad
  // items is not answered with a thousand messages.
  const listed = fields.length > MAX_LISTED_FIELDS ? Object.fromEntries(fields.slice(0, MAX_LISTED_FIELDS).map((f) => [f, errors[f]])) : errors;
  return new AppError('validation_failed', 422, message, { errors: listed });
}

/** Merges field error maps, keeping every message once, in order. */
export function mergeFieldErrors(...maps: FieldErrors[]): FieldErrors {
  const out: FieldErrors = {};
  for (const map of maps) {
    for (const [field, messages] of Object.entries(map)) {
      const list = (out[field] ??= []);
      for (const m of messages) if (!list.includes(m)) list.push(m);
    }
  }
  return out;
}
