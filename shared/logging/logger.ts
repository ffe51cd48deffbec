import pino, { type Logger } from 'pino';

export type { Logger };

const FLUSH_EVERY_MS = 250;

/**
 * Structured JSON logs on stdout; one logger per process, children per component. Lines
 * are written in 4 KiB chunks rather than one write per line (the request paths log every
 * request), flushed every quarter second and on exit: a SIGKILL loses at most that much.
 */
export function createLogger(service: string, level = 'info'): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  return pino(
    {
      level,
      base: { service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.token', '*.password'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
