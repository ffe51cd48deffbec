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
const MISSING = {
  Event: ['missing_event_title', 'missing_event_text'],
  Calendar: ['missing_calendar_title', 'missing_calendar_text'],
  Link: ['missing_link_title', 'missing_link_text'],
  'Dynamic link': ['missing_link_title', 'dynamic_link_invalid'],
} as const;
export const missing = (what: keyof typeof MISSING) => notFound(what).withPage((locale) => messagePage(locale, MISSING[what][0], MISSING[what][1]));
