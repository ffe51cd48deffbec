import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import { type Logger, requestLineLogger } from '../../../shared/logging/logger';
import type { HttpMetrics } from './http-metrics';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,64}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id (X-Request-Id), also carried into jobs this request enqueues. */
    id: string;
    /** A logger bound to this request's id. */
    log: Logger;
  }
}

/**
 * The path as logged: the credentials some paths carry are masked (a smart link's key, which
 * lets anyone post to an unsigned link, to its first four characters; a subscriber's
 * personal feed token entirely), so whoever reads the logs cannot use them. The query is
 * never logged (it carries signatures).
 */
function loggedPath(url: string): string {
  const path = url.split('?')[0];
  // Matched as Express matches routes, whatever the spelling: any letter case, percent-encoded
  // letters, a trailing slash. Whatever follows /feeds/ is the token and is never logged.
  let plain = path;
  try {
    plain = decodeURIComponent(path);
  } catch {
    // broken percent-encoding: looked at as it came
  }
  const lower = plain.toLowerCase();
  const feeds = lower.indexOf('/feeds/');
  if (feeds >= 0) return `${plain.slice(0, feeds)}/feeds/[redacted]`;
  if (lower.startsWith('/s/')) return plain.replace(/^\/s\/([^/]{0,4})[^/]*/i, '/s/$1…');
  return path;
}

/**
 * A request id on every request (a sane incoming X-Request-Id is kept, so a caller can
 * follow its own id), echoed in the response, and one structured log line per request
 * when it finishes. Shared by the Express app and the ingest path that runs beside it.
 */
export function beginRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, observe: (seconds: number) => void): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  // Taken now: routers rewrite req.url on the way (a mounted router strips its prefix).
  const path = req.url ?? '';
  const started = process.hrtime.bigint();
  const lines = requestLineLogger(logger);
  res.once('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const status = res.statusCode;
    observe(ms / 1000);
    const url = loggedPath(path);
    const line = { reqId: id, method: req.method, url, status, ms: Math.round(ms * 100) / 100 };
    if (status >= 500) lines.error(line, 'request failed');
    else lines.info(line, 'request completed');
  });
  return id;
}

const LOGGER = Symbol('request logger');
const CHILD = Symbol('request child logger');
type Logged = { id: string; [LOGGER]: Logger; [CHILD]?: Logger };

/**
 * `req.log`, made only when something logs (this runs on every request). A getter on the
 * request prototype, not defined on each request: a property defined per object turns it
 * into a slow dictionary, and Express reads the request's properties many times over.
 */
Object.defineProperty(express.request, 'log', {
  configurable: true,
  get(this: Logged) {
    return (this[CHILD] ??= this[LOGGER].child({ reqId: this.id }));
  },
});

export function requestContext(logger: Logger, metrics: HttpMetrics): RequestHandler {
  return (req, res, next) => {
    const id = beginRequest(logger, req, res, (seconds) => {
      // The route pattern (never the raw path: ids would make a series per event).
      const route = req.route?.path !== undefined ? req.baseUrl + req.route.path : res.statusCode === 404 ? 'not_found' : 'other';
      metrics.observe(req.method, typeof route === 'string' ? route : 'other', res.statusCode, seconds);
      if (res.locals.errorCode === 'event_limit_exceeded') metrics.eventLimitRejected();
    });
    req.id = id;
    (req as unknown as Logged)[LOGGER] = logger;
    next();
  };
}
