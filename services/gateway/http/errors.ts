import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { AppError, badRequest, errorJson, httpError, payloadTooLarge, unavailable, unsupportedMediaType } from '../../../shared/errors/app-error';
import { isDbUnavailableError } from '../../../shared/db/knex';
import { isRedisUnavailableError } from '../../../shared/queues/redis';
import { errorPage, messagePage, pageCsp } from '../public/views';
import { pageLocale, translator, type Locale } from '../public/i18n';
import { FORM_FIELD_LIMIT, NOT_UTF8, UTF8_BODY } from './body';

const BAD_PATH_ENCODING = 'The address is not valid: every "%" in it must begin a %XX escape, and the escapes must spell UTF-8.';

/** Maps body-parser failures, outages and anything unexpected to the shapes of docs/api.md. */
function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number; limit?: number } | null;
  switch (e?.type) {
    case 'entity.too.large':
      return payloadTooLarge(e.limit);
    case 'parameters.too.many':
      return new AppError('payload_too_large', 413, `The form has more fields than this endpoint takes: at most ${FORM_FIELD_LIMIT}.`);
    case 'entity.parse.failed':
      return badRequest('The request body is not valid JSON.');
    case 'entity.encoding.invalid':
      return badRequest(NOT_UTF8);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType(UTF8_BODY);
    case 'request.aborted':
      return badRequest('The request was aborted.');
    case 'request.size.invalid':
      return badRequest('The request body does not match its Content-Length.');
    default:
      break;
  }
  if (isDbUnavailableError(err) || isRedisUnavailableError(err)) return unavailable();
  // Express raises a 400 URIError for a path whose percent-encoding does not decode.
  const status = e?.status ?? e?.statusCode;
  if (status === 400) return badRequest(err instanceof URIError ? BAD_PATH_ENCODING : 'The request could not be read.');
  return null;
}

/** What an error is answered with, for JSON clients and for browsers alike. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  /** The JSON body: `{"message"}` (or the contract's `{"error"}`) and the error's extra fields. */
  json: Record<string, unknown>;
  /** The HTML page for a browser at a public address, in its language. */
  page: (locale: Locale) => string;
  /** The error's code (`server_error` for one not raised on purpose), for the request log. */
  code: string;
  /** Set for an error that was not raised on purpose (a 500): it is logged with its stack. */
  unexpected: boolean;
}

/**
 * The one mapping from an error to its answer, used by the Express app and by the smart-link
 * ingest path that runs beside it: what the gateway knows of body-parser failures and
 * outages, then errorJson's answer, and the page a browser gets instead of the JSON.
 */
export function errorAnswer(err: unknown): ErrorAnswer {
  const mapped = toAppError(err);
  const { status, headers, json, code } = errorJson(mapped ?? err);
  const message = String(json[mapped?.messageKey ?? 'message']);
  const fieldErrors = mapped?.body.errors as Record<string, string[]> | undefined;
  return {
    status,
    headers,
    json,
    code,
    page: (locale) => {
      const page = mapped?.page;
      if (typeof page === 'function') return page(locale);
      if (page !== undefined) return page;
      return errorPage(locale, status, status >= 500 ? translator(locale)('error_server_text') : message, fieldErrors);
    },
    unexpected: !mapped,
  };
}

/** Whether a request would rather have JSON than a page (public addresses answer both). */
export const wantsJson = (req: Request) => req.accepts(['html', 'json']) === 'json';

/** Whether a request asks for a page first (a browser); a client that takes neither gets JSON. */
const wantsPage = (req: Request) => req.accepts(['html', 'json']) === 'html';

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    req.log.error({ err }, 'error after the response started');
    res.destroy();
    return;
  }
  const answer = errorAnswer(err);
  if (answer.unexpected) req.log.error({ err }, 'unhandled error');
  else if (answer.status >= 500) req.log.warn({ err }, String(answer.json.message));
  res.locals.errorCode = answer.code;
  res.status(answer.status).set(answer.headers);
  // People reach the public pages in a browser: answer them with a page, not JSON.
  const isPage = (res.locals.page as boolean | undefined) ?? !req.path.startsWith('/api');
  if (isPage && wantsPage(req)) {
    res.set('Content-Security-Policy', pageCsp()).set('Referrer-Policy', 'no-referrer').type('html').send(answer.page(pageLocale(req)));
    return;
  }
  res.json(answer.json);
};

/** Unknown `/api` paths: JSON 404 (a path served for other methods got its 405 from methodNotAllowed first). */
export const apiNotFound: RequestHandler = (_req, _res, next) => {
  next(httpError(404, 'Not found.'));
};

/** Any other unknown address: a page for a browser, JSON for others. */
export const pageNotFound: RequestHandler = (_req, _res, next) => {
  next(httpError(404, 'Not found.').withPage((locale) => messagePage(locale, 'error_title_not_found', 'nothing_here')));
};

/** A route path segment: a literal (`events`), or a parameter with what follows it in the segment (`:uid`, `:uid.ics`). */
type Segment = { literal: string } | { suffix: string };

const segmentsOf = (routePath: string): Segment[] =>
  routePath.split('/').map((part) => {
    const param = /^:[A-Za-z_]\w*/.exec(part);
    return param ? { suffix: part.slice(param[0].length) } : { literal: part };
  });

/** Whether a request path is one of the route's, segment by segment (a trailing slash allowed), as Express matches it. */
function matchesRoute(route: Segment[], path: string): boolean {
  const parts = path.split('/');
  if (parts.length === route.length + 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length !== route.length) return false;
  return route.every((seg, i) =>
    'literal' in seg ? parts[i] === seg.literal : parts[i].length > seg.suffix.length && parts[i].endsWith(seg.suffix),
  );
}

/** The methods the routes take on a path (HEAD with GET), or an empty set for a path none serves. */
function allowedMethods(routes: Array<{ method: string; path: string }>): (path: string) => Set<string> {
  const byPath = new Map<string, { segments: Segment[]; methods: Set<string> }>();
  for (const r of routes) {
    const entry = byPath.get(r.path) ?? { segments: segmentsOf(r.path), methods: new Set<string>() };
    entry.methods.add(r.method.toUpperCase());
    byPath.set(r.path, entry);
  }
  return (path) => {
    const allowed = new Set<string>();
    for (const { segments, methods } of byPath.values()) if (matchesRoute(segments, path)) for (const m of methods) allowed.add(m);
    if (allowed.has('GET')) allowed.add('HEAD');
    return allowed;
  };
}

const allowHeader = (allowed: Set<string>) => [...allowed].sort().join(', ');

/**
 * A path the service serves, asked with a method none of its routes take: 405 with `Allow`
 * (RFC 9110 §15.5.6) instead of a 404 that says the address does not exist. JSON, or a page
 * for a browser off `/api`, like the 404s beside it.
 */
export function methodNotAllowed(routes: Array<{ method: string; path: string }>): RequestHandler {
  const allowedOn = allowedMethods(routes);
  return (req, _res, next) => {
    const allowed = allowedOn(req.path);
    if (!allowed.size || allowed.has(req.method)) return next();
    const allow = allowHeader(allowed);
    next(new AppError('method_not_allowed', 405, `This address does not take ${req.method}: use ${allow}.`, {}, { Allow: allow }));
  };
}

/**
 * OPTIONS on a path the service serves: 204 with `Allow` and no body (Express's own answer
 * is a 200 text/plain list, and every API answer is JSON). Mounted before the routes,
 * which would otherwise answer it; a path none serves falls through to the 404.
 */
export function answerOptions(routes: Array<{ method: string; path: string }>): RequestHandler {
  const allowedOn = allowedMethods(routes);
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = allowedOn(req.path);
    if (!allowed.size) return next();
    res.status(204).set('Allow', allowHeader(allowed)).end();
  };
}
