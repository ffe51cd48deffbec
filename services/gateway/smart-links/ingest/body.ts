import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { Readable } from 'node:stream';
import busboy from 'busboy';

/** Submissions are small forms; anything bigger is refused before it is read whole. */
export const SUBMISSION_LIMIT_BYTES = 64 * 1024;

export type BodyProblem = { status: 413 | 415 | 400; message: string };
export type ParsedFields = { ok: true; fields: Record<string, unknown> } | { ok: false; problem: BodyProblem };

/** Reads the whole body (the signature covers the raw bytes), or a 413 past the limit. */
export function readBody(req: IncomingMessage): Promise<Buffer | BodyProblem> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > SUBMISSION_LIMIT_BYTES) {
    req.resume();
    return Promise.resolve({ status: 413, message: 'The request body is too large.' });
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
        resolve({ status: 413, message: 'The request body is too large.' });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve({ status: 400, message: 'The request was aborted.' });
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
    const parsed = parseQuery(raw.toString('utf8'));
    const out: Fields = {};
    for (const [k, v] of Object.entries(parsed)) out[k] = single(v);
    return { ok: true, fields: out };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      const value: unknown = JSON.parse(raw.toString('utf8'));
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problem: { status: 400, message: 'The request body must be a JSON object.' } };
      return { ok: true, fields: value as Fields };
    } catch {
      return { ok: false, problem: { status: 400, message: 'The request body is not valid JSON.' } };
    }
  }
  if (type === 'multipart/form-data') return parseMultipart(contentType as string, raw);
  return { ok: false, problem: { status: 415, message: 'Unsupported content type: send application/x-www-form-urlencoded, multipart/form-data or application/json.' } };
}

function parseMultipart(contentType: string, raw: Buffer): Promise<ParsedFields> {
  return new Promise((resolve) => {
    const fields: Fields = {};
    let problem: BodyProblem | null = null;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fields: 100, fieldSize: SUBMISSION_LIMIT_BYTES, files: 0 } });
    } catch {
      resolve({ ok: false, problem: { status: 400, message: 'The multipart body is malformed.' } });
      return;
    }
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_name, stream) => {
      problem = { status: 415, message: 'Files are not accepted: send the fields only.' };
      stream.resume();
    });
    parser.on('filesLimit', () => {
      problem = { status: 415, message: 'Files are not accepted: send the fields only.' };
    });
    parser.on('error', () => resolve({ ok: false, problem: { status: 400, message: 'The multipart body is malformed.' } }));
    parser.on('close', () => resolve(problem ? { ok: false, problem } : { ok: true, fields }));
    Readable.from([raw]).pipe(parser);
  });
}
