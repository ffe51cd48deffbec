import fs from 'node:fs';
import { AppError } from '../../../shared/errors/app-error';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import ejs from 'ejs';
import type { Express, RequestHandler, Router } from 'express';
import express from 'express';
import type { Queue } from 'bullmq';

const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Everything the dashboard loads comes from this server: the page may not reach out (its
 * template links a web font from Google, which is dropped, see localTemplate).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/**
 * The queue dashboard (bull-board) at /admin/queues: every queue's jobs, their data and
 * errors, with retry and clean actions. Behind ADMIN_TOKEN, as the password of HTTP Basic
 * auth (any user name, so a browser can open it) or as a Bearer token; not mounted at all
 * without the setting.
 */
export function queueBoard(queues: Queue[], adminToken: string): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q)),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Calendar queues' } },
  });
  // The package's page, rendered from a copy without links to other hosts.
  (adapter.getRouter() as Express).engine('ejs', (file: string, data: object, done: (err: Error | null, html?: string) => void) => {
    try {
      done(null, ejs.render(localTemplate(file), data));
    } catch (err) {
      done(err as Error);
    }
  });
  const router = express.Router();
  router.use(QUEUE_BOARD_PATH, adminAuth(adminToken), (_req, res, next) => {
    res.set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'no-store', 'X-Frame-Options': 'DENY' });
    next();
  }, adapter.getRouter() as Express);
  return router;
}

const templates = new Map<string, string>();

/** The template without `<link>`s to other hosts (the UI falls back to system fonts). */
function localTemplate(file: string): string {
  let text = templates.get(file);
  if (text === undefined) {
    text = fs.readFileSync(file, 'utf8').replace(/<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi, '');
    templates.set(file, text);
  }
  return text;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** ADMIN_TOKEN as a Basic password or a Bearer token, compared in constant time (as digests). */
function adminAuth(token: string): RequestHandler {
  const expected = digest(token);
  return (req, _res, next) => {
    const header = req.headers.authorization ?? '';
    let given: string | null = null;
    const bearer = /^Bearer[ \t]+(\S+)$/i.exec(header);
    const basic = /^Basic[ \t]+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (bearer) given = bearer[1];
    else if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      given = decoded.slice(decoded.indexOf(':') + 1);
    }
    if (given !== null && timingSafeEqual(digest(given), expected)) return next();
    next(new AppError('unauthenticated', 401, 'Unauthenticated.', {}, { 'WWW-Authenticate': 'Basic realm="queues", charset="UTF-8"' }));
  };
}
