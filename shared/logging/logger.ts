import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; one logger per process, children per component. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.token', '*.password'],
      censor: '[redacted]',
    },
  });
}
