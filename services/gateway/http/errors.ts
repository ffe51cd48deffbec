import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, badRequest, payloadTooLarge, unavailable, unsupportedMediaType } from '../../../shared/errors/app-error';
import { isDbUnavailableError } from '../../../shared/db/knex';
import { isRedisUnavailableError } from '../../../shared/queues/redis';
import { errorPage, pageCsp } from '../public/views';

/** Maps body-parser failures, outages and anything unexpected to the shapes of API.md. */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number } | null;
  switch (e?.type) {
    case 'entity.too.large':
      return payloadTooLarge();
    case 'entity.parse.failed':
      return badRequest('The request body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType('UTF-8 encoded JSON');
    case 'request.aborted':
      return badRequest('The request was aborted.');
    case 'request.size.invalid':
      return badRequest('The request body does not match its Content-Length.');
    default:
      break;
  }
  if (isDbUnavailableError(err) || isRedisUnavailableError(err)) return unavailable();
  // URIError from a malformed percent-encoded path, and similar client faults from Express.
  const status = e?.status ?? e?.statusCode;
  if (status === 400) return badRequest('Bad request.');
  return null;
}

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const mapped = toAppError(err);
  if (res.headersSent) {
    req.log.error({ err }, 'error after the response started');
    res.destroy();
    return;
  }
  if (!mapped) req.log.error({ err }, 'unhandled error');
  else if (mapped.status >= 500) req.log.warn({ err }, mapped.message);
  const status = mapped?.status ?? 500;
  const message = mapped?.message ?? 'Server Error';
  if (mapped) res.set(mapped.headers);
  res.locals.errorCode = mapped?.code ?? 'server_error';
  // People reach the public pages in a browser: answer them with a page, not JSON.
  const isPage = res.locals.page === true || !req.path.startsWith('/api');
  if (isPage && req.accepts(['html', 'json']) === 'html') {
    const fieldErrors = mapped?.body.errors as Record<string, string[]> | undefined;
    res.status(status).set('Cache-Control', 'no-store').set('Content-Security-Policy', pageCsp()).type('html').send(errorPage(status, message, fieldErrors));
    return;
  }
  res.status(status).json(mapped ? { message, ...mapped.body } : { message });
};

/** Unknown `/api` paths: JSON 404 (and 405 where the path exists with another method). */
export const apiNotFound: RequestHandler = (_req, res) => {
  res.status(404).json({ message: 'Not found.' });
};
