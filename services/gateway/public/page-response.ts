import type { Request, Response } from 'express';
import { cacheControl } from './deliver';
import { pageCsp } from './views';

/** Whether the client asked for JSON rather than a page (public addresses answer both). */
export const wantsJson = (req: Request) => req.accepts(['html', 'json']) === 'json';

/** A public page: its CSP, caching (never for errors, private when personal), no referrer. */
export function sendHtml(res: Response, status: number, body: string, opts: { personal?: boolean; frameable?: boolean } = {}): void {
  res
    .status(status)
    .set('Content-Security-Policy', pageCsp({ frameable: opts.frameable }))
    .set('Cache-Control', status >= 400 ? 'no-store' : cacheControl(opts.personal ?? false))
    .set('Referrer-Policy', 'no-referrer')
    .type('html')
    .send(body);
}
