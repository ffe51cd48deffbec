import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { unsupportedMediaType } from '../../../shared/errors/app-error';

export const API_BODY_LIMIT = '1mb';

export const NOT_UTF8 = 'The request body is not valid UTF-8.';

/**
 * API.md: every JSON body is UTF-8. The parser would decode other bytes to U+FFFD and store
 * them; refuse them instead (mapped to a 400 by the error handler).
 */
function requireUtf8(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (/^utf-?8$/i.test(encoding) && !isUtf8(body)) throw Object.assign(new Error(NOT_UTF8), { status: 400, type: 'entity.encoding.invalid' });
}

/**
 * A JSON body parser: any JSON value is parsed (not only objects and arrays), so a string,
 * number or null reaches validation and gets the same 422 "must be a JSON object" as an
 * array; malformed JSON stays a 400.
 */
export const parseJsonBody = (limit: string) =>
  express.json({ limit, strict: false, verify: requireUtf8, type: ['application/json', 'application/*+json'] });

const parseJson = parseJsonBody(API_BODY_LIMIT);

/** A request that carries body bytes (an explicit `Content-Length: 0` carries none). */
const sendsBody = (req: Parameters<RequestHandler>[0]) =>
  typeis.hasBody(req) && !(req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined);

/** JSON bodies only: a body in any other content type is a 415, not a silent empty body. */
export const jsonBody: RequestHandler = (req, res, next) => {
  if (sendsBody(req) && !typeis(req, ['application/json', 'application/*+json'])) {
    next(unsupportedMediaType('application/json'));
    return;
  }
  parseJson(req, res, next);
};

const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

/**
 * The public pages' forms (unlock, RSVP, subscriber details): form-urlencoded, as the pages
 * post them, or JSON. Any other content type (text/plain, multipart) is a 415 rather than
 * an empty body that would be answered as missing fields.
 */
export function formOrJsonBody(limit: string): RequestHandler[] {
  const only: RequestHandler = (req, _res, next) => {
    if (sendsBody(req) && !typeis(req, FORM_TYPES)) next(unsupportedMediaType('application/x-www-form-urlencoded or application/json'));
    else next();
  };
  return [only, express.urlencoded({ extended: false, limit, type: FORM_TYPES[0] }), parseJsonBody(limit)];
}
