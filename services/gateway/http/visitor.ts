import type { Request } from 'express';
import { parse as parseCookies } from 'cookie';
import type { Locale } from '../../../shared/i18n/translations';
import { langOf, pageLocale } from '../public/i18n';

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
  /** `lang=…` when the address asked for one of our languages, else empty (as langParam). */
  readonly lang: string;
  /** The pages' language for a calendar whose own is this: `?lang=`, Accept-Language, the calendar's, English. */
  locale(calendarLocale?: string | null): Locale;
}

/** Where a request keeps its Visitor: one per request, however many times a handler asks. */
const VISITOR = Symbol('visitor');

export function visitorOf(req: Request): Visitor {
  const holder = req as Request & { [VISITOR]?: Visitor };
  return (holder[VISITOR] ??= new RequestVisitor(req));
}

/** A plain class (no closures, no WeakMap): made on the hot path of every public page. */
class RequestVisitor implements Visitor {
  readonly query: Readonly<Record<string, unknown>>;
  readonly userAgent: string;
  readonly referrer: string | undefined;
  private parsedCookies: Record<string, string | undefined> | undefined;

  constructor(private readonly req: Request) {
    // Express parses the query string at each read of req.query: once here.
    this.query = req.query as Record<string, unknown>;
    this.userAgent = req.headers['user-agent'] ?? '';
    this.referrer = req.headers.referer;
  }

  get cookies(): Readonly<Record<string, string | undefined>> {
    const header = this.req.headers.cookie;
    this.parsedCookies ??= header ? parseCookies(header) : {};
    return this.parsedCookies;
  }

  get lang(): string {
    return langOf(this.query);
  }

  locale(calendarLocale?: string | null): Locale {
    return pageLocale(this.req, calendarLocale);
  }
}
