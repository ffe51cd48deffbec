import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import contentType from 'content-type';
import typeis from 'type-is';
import { unsupportedMediaType } from '../../../shared/errors/app-error';

const API_BODY_LIMIT = '1mb';

export const NOT_UTF8 = 'The request body is not valid UTF-8.';

/**
 * Every JSON body is UTF-8 (docs/api.md, "Errors"). The parser would decode other bytes to U+FFFD and store
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
const parseJsonBody = (limit: string) =>
  express.json({ limit, strict: false, verify: requireUtf8, type: ['application/json', 'application/*+json'] });

const parseJson = parseJsonBody(API_BODY_LIMIT);

/** A request that carries body bytes (an explicit `Content-Length: 0` carries none). */
const sendsBody = (req: Parameters<RequestHandler>[0]) =>
  typeis.hasBody(req) && !(req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined);

/**
 * A charset other than UTF-8: JSON is UTF-8 (RFC 8259), and the parser would otherwise
 * decode UTF-7 or UTF-16 and store what that made (a UTF-7 body once became a title
 * `<b>utf7</b>`).
 */
function otherCharset(req: Parameters<RequestHandler>[0]): boolean {
  const type = req.headers['content-type'];
  if (!type) return false;
  try {
    const charset = contentType.parse(type).parameters.charset;
    return charset !== undefined && !/^utf-?8$/i.test(charset);
  } catch {
    return false; // a malformed header: the content-type checks answer it
  }
}

/** The 415 for a body of another type or charset, or undefined when the body may be read. */
function refusedType(req: Parameters<RequestHandler>[0], types: string[]) {
  if (!sendsBody(req)) return undefined;
  if (!typeis(req, types)) return unsupportedMediaType(types.filter((t) => !t.includes('*')).join(' or '));
  return otherCharset(req) ? unsupportedMediaType(UTF8_BODY) : undefined;
}

/** What the 415 for a body in another charset asks for (body-parser's own refusal says the same). */
export const UTF8_BODY = 'a UTF-8 encoded body';

/** JSON bodies only: a body in any other content type, or JSON not in UTF-8, is a 415, not a silent empty body. */
export const jsonBody: RequestHandler = (req, res, next) => {
  const refused = refusedType(req, ['application/json', 'application/*+json']);
  if (refused) next(refused);
  else parseJson(req, res, next);
};

const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

/**
 * The public pages' forms (unlock, RSVP, subscriber details): form-urlencoded, as the pages
 * post them, or JSON. Any other content type (text/plain, multipart) is a 415 rather than
 * an empty body that would be answered as missing fields.
 */
/** Fields a public form may send: each form has a handful; more is not a person's form. */
export const FORM_FIELD_LIMIT = 20;

export function formOrJsonBody(limit: string): RequestHandler[] {
  const only: RequestHandler = (req, _res, next) => {
    next(refusedType(req, FORM_TYPES));
  };
  return [only, express.urlencoded({ extended: false, limit, type: FORM_TYPES[0], parameterLimit: FORM_FIELD_LIMIT }), parseJsonBody(limit)];
}
