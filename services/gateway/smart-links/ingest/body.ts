import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import iconv from 'iconv-lite';
import { type AppError, badRequest, httpError, payloadTooLarge, validationFailed } from '../../../../shared/errors/app-error';
import { NOT_UTF8 } from '../../http/body';

/** Submissions are small forms; anything bigger is refused before it is read whole. */
export const SUBMISSION_LIMIT_BYTES = 64 * 1024;

/** A body refused before its fields are read: answered by the same mapping as every error. */
export type BodyProblem = AppError;

const NOT_AN_OBJECT = 'The request body must be a JSON object.';
type ParsedFields = { ok: true; fields: Record<string, unknown> } | { ok: false; problem: BodyProblem };

/** Reads the whole body (the signature covers the raw bytes), or a 413 past the limit. */
export function readBody(req: IncomingMessage): Promise<Buffer | BodyProblem> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > SUBMISSION_LIMIT_BYTES) {
    req.resume();
    return Promise.resolve(payloadTooLarge(SUBMISSION_LIMIT_BYTES));
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > SUBMISSION_LIMIT_BYTES) {
        done = true;
        resolve(payloadTooLarge(SUBMISSION_LIMIT_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve(badRequest('The request was aborted.'));
      done = true;
    });
  });
}

type Fields = Record<string, unknown>;

const single = (value: unknown) => (Array.isArray(value) ? value[value.length - 1] : value);

/** The submitted fields: form-urlencoded, multipart without files, or a JSON object. */
export async function parseFields(contentType: string | undefined, raw: Buffer): Promise<ParsedFields> {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' || (type === '' && raw.length === 0)) {
    const charset = charsetFor(contentType);
    if (charset === null) return { ok: false, problem: unsupportedCharset(contentType as string) };
    if (charset === undefined) {
      const parsed = parseQuery(raw.toString('utf8'));
      const out: Fields = {};
      for (const [k, v] of Object.entries(parsed)) out[k] = single(v);
      return { ok: true, fields: out };
    }
    return { ok: true, fields: parseUrlencoded(raw, charset) };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    // As on the API: bytes that are not UTF-8 are refused, not read as U+FFFD, and valid
    // JSON that is not an object is a 422 on the body.
    if (!isUtf8(raw)) return { ok: false, problem: badRequest(NOT_UTF8) };
    try {
      const value: unknown = JSON.parse(raw.toString('utf8'));
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problem: validationFailed({ body: [NOT_AN_OBJECT] }) };
      return { ok: true, fields: value as Fields };
    } catch {
      return { ok: false, problem: badRequest('The request body is not valid JSON.') };
    }
  }
  if (type === 'multipart/form-data') {
    const charset = charsetFor(contentType);
    if (charset === null) return { ok: false, problem: unsupportedCharset(contentType as string) };
    return parseMultipart(contentType as string, raw, charset);
  }
  return { ok: false, problem: httpError(415, 'Unsupported content type: send application/x-www-form-urlencoded, multipart/form-data or application/json.') };
}

const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
const charsetOf = (contentType: string | undefined) => {
  const m = contentType?.includes(';') ? CHARSET.exec(contentType) : null;
  return m ? (m[1] ?? m[2]).toLowerCase() : undefined;
};

/** Names iconv-lite decodes that are not charsets: a body "in" them is refused. */
const NOT_CHARSETS = new Set(['base64', 'base64url', 'hex']);

/**
 * The body's declared charset: undefined for UTF-8 (the default, read by the usual path),
 * null for one we cannot read. Decoding goes through iconv-lite, not TextDecoder: Node's
 * TextDecoder reads windows-1252 as ISO-8859-1 (nodejs/node#60888), losing €, ’ and “”.
 */
function charsetFor(contentType: string | undefined): string | null | undefined {
  const charset = charsetOf(contentType);
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return undefined;
  return iconv.encodingExists(charset) && !NOT_CHARSETS.has(charset) ? charset : null;
}

function unsupportedCharset(contentType: string): BodyProblem {
  return httpError(415, `Unsupported charset "${(charsetOf(contentType) ?? '').slice(0, 40)}": send UTF-8, or name a charset such as ISO-8859-1, windows-1252 or Shift_JIS.`);
}

/**
 * A form in another charset than UTF-8: each name and value is percent-decoded to its
 * bytes (`+` is a space), then those bytes are read in the charset. The body is taken one
 * byte per character (latin1), so bytes sent without percent-encoding are kept as bytes.
 */
function parseUrlencoded(raw: Buffer, charset: string): Fields {
  const decode = (s: string) =>
    iconv.decode(Buffer.from(s.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1'), charset);
  const out: Fields = {};
  for (const pair of raw.toString('latin1').split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    out[decode(eq < 0 ? pair : pair.slice(0, eq))] = eq < 0 ? '' : decode(pair.slice(eq + 1));
  }
  return out;
}

/**
 * busboy reads each part in its own charset (its Content-Type's), else in the one the
 * request declares, else UTF-8; names in headers are UTF-8, as browsers send them. A part
 * in a charset busboy cannot read arrives without a value: a 415 like an unknown charset.
 */
function parseMultipart(contentType: string, raw: Buffer, charset: string | undefined): Promise<ParsedFields> {
  return new Promise((resolve) => {
    const fields: Fields = {};
    let problem: BodyProblem | null = null;
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defCharset: charset ?? 'utf8',
        defParamCharset: 'utf8',
        limits: { fields: 100, fieldSize: SUBMISSION_LIMIT_BYTES, files: 0 },
      });
    } catch {
      resolve({ ok: false, problem: badRequest('The multipart body is malformed.') });
      return;
    }
    parser.on('field', (name, value: string | undefined) => {
      if (value === undefined) problem = httpError(415, `Unsupported charset in the part "${name.slice(0, 40)}": send UTF-8, or name a charset such as ISO-8859-1 or Shift_JIS.`);
      else fields[name] = value;
    });
    parser.on('file', (_name, stream) => {
      problem = httpError(415, 'Files are not accepted: send the fields only.');
      stream.resume();
    });
    parser.on('filesLimit', () => {
      problem = httpError(415, 'Files are not accepted: send the fields only.');
    });
    parser.on('error', () => resolve({ ok: false, problem: badRequest('The multipart body is malformed.') }));
    parser.on('close', () => resolve(problem ? { ok: false, problem } : { ok: true, fields }));
    Readable.from([raw]).pipe(parser);
  });
}
