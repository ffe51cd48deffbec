import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response, type NextFunction, type Router } from 'express';
import { httpError } from '../../../shared/errors/app-error';
import { englishPage } from '../public/views';

/**
 * The organizer dashboard: a single-page app built by `npm run build` into dist/dashboard and
 * served here at /app. Its hashed files under /app/assets/ are cached for a year; every other
 * /app address is index.html (the app routes itself), never cached. Read-only: GET and HEAD.
 */

/**
 * What the dashboard may do in the browser: run its own scripts and styles, call this
 * service's API, and nothing from any other origin; no inline script or style attribute.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET_CACHE = 'public, max-age=31536000, immutable';

/** dist/dashboard, from the compiled gateway (dist/services/gateway/dashboard) or its source (jest). */
function defaultDashboardDir(): string {
  const up = path.resolve(__dirname, '..', '..', '..');
  return path.basename(up) === 'dist' ? path.join(up, 'dashboard') : path.join(up, 'dist', 'dashboard');
}

const notBuilt = () =>
  httpError(503, 'The dashboard is not built: run `npm run build`.').withPage(
    englishPage('Dashboard not built', 'The dashboard’s files are missing on this server. Run `npm run build`, then reload this page.'),
  );

/** index.html, read again only when the file changes (a new build). */
function indexReader(dir: string): () => Promise<string | null> {
  const file = path.join(dir, 'index.html');
  let cached: { mtimeMs: number; body: string } | null = null;
  return async () => {
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat) return null;
    if (cached?.mtimeMs !== stat.mtimeMs) cached = { mtimeMs: stat.mtimeMs, body: await fs.promises.readFile(file, 'utf8') };
    return cached.body;
  };
}

/** The /app router; mount it at `/app` before the 404 handlers. */
export function dashboardApp(dir: string = defaultDashboardDir()): Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  const readIndex = indexReader(dir);
  const assets = express.static(path.join(dir, 'assets'), {
    index: false,
    redirect: false,
    dotfiles: 'ignore',
    fallthrough: true,
    setHeaders: (res) => res.set('Cache-Control', ASSET_CACHE),
  });

  router.use((req: Request, _res: Response, next: NextFunction) => {
    // Anything but a read is not ours: it falls through to the 404 page.
    if (req.method !== 'GET' && req.method !== 'HEAD') return next('router');
    next();
  });
  // A hashed file, or a 404: never index.html for a script or style that is not there.
  router.use('/assets', assets, (_req: Request, _res: Response, next: NextFunction) => next('router'));
  router.use(async (_req: Request, res: Response) => {
    const body = await readIndex();
    if (body === null) throw notBuilt();
    res
      .set('Content-Security-Policy', DASHBOARD_CSP)
      .set('Cache-Control', 'no-store')
      .set('Referrer-Policy', 'no-referrer')
      .set('X-Frame-Options', 'DENY')
      .type('html')
      .send(body);
  });
  return router;
}
