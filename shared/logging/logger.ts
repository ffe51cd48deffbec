import pino, { type Logger } from 'pino';

export type { Logger };

const FLUSH_EVERY_MS = 250;

/** No log line is longer than this: a line never carries a payload or a whole Redis command. */
export const MAX_LINE_BYTES = 8192;
/** An error's message and stack are cut to this many characters each. */
const MAX_ERROR_TEXT = 1000;

const cut = (text: string | undefined, max: number) => (text && text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);

/**
 * Errors as logged: type, code, message and stack, each cut short. Nothing else of the
 * error object: a Redis ReplyError carries the failed command with all its arguments (a job
 * with every submission of its group, personal data included), a pg error the query's
 * values.
 */
export function serializeError(err: unknown): Record<string, unknown> | unknown {
  if (!(err instanceof Error)) return err;
  const e = err as Error & { code?: unknown };
  return {
    type: e.name,
    ...(typeof e.code === 'string' || typeof e.code === 'number' ? { code: e.code } : {}),
    message: cut(e.message, MAX_ERROR_TEXT),
    stack: cut(e.stack, MAX_ERROR_TEXT),
  };
}

/**
 * A line over MAX_LINE_BYTES (a caller logged something large) is replaced by one that
 * keeps what identifies it (level, time, service, request id, message) and says how long
 * it was: log volume stays bounded whatever is logged.
 */
export function capLine(line: string): string {
  // A UTF-16 unit is at most three bytes of UTF-8: a line that short needs no count.
  if (line.length * 3 <= MAX_LINE_BYTES || Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    // not ours to read: keep only the fact
  }
  const keep = ['level', 'time', 'service', 'pid', 'reqId', 'queue', 'jobId'];
  const kept = Object.fromEntries(keep.filter((k) => parsed[k] !== undefined).map((k) => [k, parsed[k]]));
  const msg = typeof parsed.msg === 'string' ? cut(parsed.msg, 500) : undefined;
  return `${JSON.stringify({ ...kept, msg, truncated: true, bytes: Buffer.byteLength(line) })}\n`;
}

const REQUEST_LINES = Symbol('request lines');
type WithRequestLines = Logger & { [REQUEST_LINES]?: Logger };

/**
 * Structured JSON logs on stdout; one logger per process, children per component. Lines
 * are written in 4 KiB chunks rather than one write per line (the request paths log every
 * request), flushed every quarter second and on exit: a SIGKILL loses at most that much.
 */
export function createLogger(service: string, level = 'info'): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  const common = { level, base: { service, pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: capLine } };
  const logger: WithRequestLines = pino(
    {
      ...common,
      serializers: { err: serializeError, error: serializeError },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.token', '*.password'],
        censor: '[redacted]',
      },
    },
    destination,
  );
  // The same lines to the same destination, for what has nothing to redact or serialize.
  logger[REQUEST_LINES] = pino(common, destination);
  return logger;
}

/**
 * The logger for the one line each request ends with: fields of our own (ids, method, a
 * masked path, status, time), so it skips the redaction every other line goes through,
 * the cost of which every request would pay. Same level, same destination, same format.
 */
export function requestLineLogger(logger: Logger): Logger {
  return (logger as WithRequestLines)[REQUEST_LINES] ?? logger;
}
