import type { Response } from 'express';
import { cacheControl } from './deliver';
import { notFound } from '../../../shared/errors/app-error';
import { messagePage, pageCsp } from './views';

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

/** A public address that leads nowhere: its page for a browser, `{"message": "… not found."}` for JSON. */
export const missing = (what: 'Event' | 'Calendar' | 'Link' | 'Dynamic link') =>
  notFound(what).withPage(messagePage(`${what} not found`, `This ${what.toLowerCase()} does not exist or is no longer available.`));
