import type { Request } from 'express';
import { parse as parseCookies } from 'cookie';
import { langParam, type Locale, pageLocale } from '../public/i18n';

/**
 * What the services behind the public pages need of a request, read at the HTTP edge so
 * that none of them takes Express's Request: the query (a signed pair, `?rsvp=`, UTM
 * fields), the cookies, the browser and where it came from, and the language the pages
 * are shown in. Cookies are parsed on first use: most page requests carry none we read.
 */
export interface Visitor {
  readonly query: Readonly<Record<string, unknown>>;
  readonly cookies: Readonly<Record<string, string | undefined>>;
  readonly userAgent: string;
  /** The Referer header, as sent. */
  readonly referrer: string | undefined;
  /** `lang=…` when the address asked for one of our languages, else empty (see langParam). */
  readonly lang: string;
  /** The pages' language for a calendar whose own is this: `?lang=`, Accept-Language, the calendar's, English. */
  locale(calendarLocale?: string | null): Locale;
}

/** One per request, however many times a handler asks. */
const visitors = new WeakMap<Request, Visitor>();

export function visitorOf(req: Request): Visitor {
  let visitor = visitors.get(req);
  if (!visitor) {
    visitor = readVisitor(req);
    visitors.set(req, visitor);
  }
  return visitor;
}

function readVisitor(req: Request): Visitor {
  let cookies: Record<string, string | undefined> | undefined;
  return {
    query: req.query as Record<string, unknown>,
    get cookies() {
      cookies ??= req.headers.cookie ? parseCookies(req.headers.cookie) : {};
      return cookies;
    },
    userAgent: req.headers['user-agent'] ?? '',
    referrer: req.headers.referer,
    lang: langParam(req),
    locale: (calendarLocale) => pageLocale(req, calendarLocale),
  };
}
