import type { Request } from 'express';
import type { EventWithCalendar } from '../../../shared/events/event-rows';
import { calendarPublicUrl } from '../../../shared/events/event-json';
import Joi from 'joi';
import type { AppContext } from '../context';
import { visitorOf } from '../http/visitor';
import { formOrJsonBody } from '../http/body';
import { messageSchema, validationErrorSchema } from '../http/responses';
import { verdictHeaders } from '../http/rate-limits';
import { defineRoute, type RouteSpec } from '../http/route';
import { uidParam, validatePart } from '../http/validation';
import { calendarFeed, eventFeed, FEED_WINDOW, goneEventFeed, sendFeed } from './calendar-feed';
import { eventTarget } from '../analytics/analytics';
import { autoKey, cacheControl, deliver, isPlatformKey, PLATFORM_KEYS } from './deliver';
import { forbidden, tooManyRequests, validationFailed } from '../../../shared/errors/app-error';
import { accessTo, eventCard, eventCookie, findCalendar, findPublishedEvent, linksWithAccess, PROTECTED_MESSAGE, shortLinkTarget, tryAccessCode, upcomingCards, viewOf, webUrlOf } from './public.service';
import { UNLOCK_COOKIE_SECONDS, unlockCookieName } from '../../../shared/links/signatures';
import { UNLOCK_ATTEMPTS, UNLOCK_EVENT_ATTEMPTS, UNLOCK_EVENT_DAILY_ATTEMPTS, UNLOCK_WINDOW_SECONDS, UnlockLimits } from './unlock-limits';
import { eventPageHtml } from './event-page';
import { PublicReadLimits } from './read-limits';
import { missing, sendHtml } from './page-response';
import { wantsJson } from '../http/errors';
import { calendarEmbedPage, calendarPage, embedPage, type LockProblem, lockedPage } from './views';
import { likelyPlatform } from './add-to-calendar';
import { CATALOGS, langParam, PAGE_VARY, pageLocale, translator } from './i18n';

/** Upcoming events per page of the calendar page, and how many pages it has at most. */
const CALENDAR_PAGE_EVENTS = 50;
const CALENDAR_PAGES = 20;
/** Upcoming events a calendar's embed shows. */
const CALENDAR_EMBED_EVENTS = 5;
/** A protected event without access, or a refused code: the access-code form again. */
const locked = (req: Request, found: EventWithCalendar, problem?: LockProblem) =>
  forbidden(problem ? LOCK_MESSAGE[problem] : PROTECTED_MESSAGE).withPage(
    lockedPage(pageLocale(req, found.calendar.locale), found.event.uid, problem),
  );
/** What JSON callers are told of a refused code (a page says it in the visitor's language). */
const LOCK_MESSAGE: Record<LockProblem, string> = {
  lock_wrong_code: 'That access code is not right.',
  lock_too_many: 'Too many wrong codes: try again later.',
  field_access_code: 'The access code is missing or too long.',
};

const eventUidParams = Joi.object({ uid: uidParam('event') });
/** A page's language; any other value (or none) leaves it to Accept-Language, then English. */
const LANG_QUERY = Joi.string().description(`The page's language: ${Object.keys(CATALOGS).join(', ')}; without it (or with another value) the best of Accept-Language, else English`);
const pageQuery = Joi.object({ lang: LANG_QUERY }).unknown(true);
const html = (description: string) => ({ description, contentType: 'text/html' });
/** Errors of the public pages: a page for browsers, `{"message"}` for Accept: application/json. */
const pageError = (description: string) => ({ description, contentType: 'text/html', body: messageSchema });
const ics = (description: string) => ({ description, contentType: 'text/calendar' });
const protectedResponses = {
  403: pageError('Protected event without a valid signature or unlock: an access-code page (JSON with Accept: application/json)'),
  404: pageError('Unknown, draft, pending, rejected or deleted event'),
};

const unlockFields = Joi.object({ access_code: Joi.string().max(64).required() }).unknown(true);

/** The event's platform keys answered with its .ics file, which count as reads of its calendar. */
const ICS_KEYS: readonly string[] = ['ics', 'apple', 'outlook'];

export function publicRoutes(ctx: AppContext): RouteSpec[] {
  const base = ctx.config.publicBaseUrl;
  const uidHost = new URL(base).host;
  const tags = ['Public pages'];
  const unlockLimits = new UnlockLimits(ctx.redis, ctx.config.queuePrefix);
  const unlockBody = formOrJsonBody('4kb');
  const readLimits = new PublicReadLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.publicReadRatePerMinute, ctx.config.publicCalendarReadRatePerMinute);
  const readsLimited = pageError(
    'Too many reads from this address (PUBLIC_READ_RATE_PER_MINUTE, across calendars) or of this calendar from all addresses (PUBLIC_CALENDAR_READ_RATE_PER_MINUTE): `Retry-After`, `X-RateLimit-Limit`, `X-RateLimit-Remaining`',
  );

  return [
    defineRoute<{ uid: string }>({
      method: 'get',
      path: '/e/:uid.ics',
      operationId: 'eventFeed',
      summary: "The event's own subscription feed (Get updates)",
      description:
        'A calendar feed holding this one event, for calendar apps to subscribe to (the event page links it as `webcal://`): they fetch it again every hour or so, and so get the event\'s changes. A deleted event, or one no longer published, answers an empty feed (no VEVENT), which makes every app that mirrors the feed drop the event. Sent compressed (br or gzip) when the client accepts it; `If-None-Match` and `If-Modified-Since` answer 304. A protected event needs the signed pair or the unlock cookie, as its page does. Each request counts as a read of the event\'s calendar, per address and per calendar (429 past either limit), and as a feed fetch in analytics.',
      tags,
      auth: false,
      page: true,
      params: eventUidParams,
      responses: {
        200: ics('The feed: the event, or no event once it is gone'),
        304: { description: 'Not modified' },
        403: protectedResponses[403],
        404: pageError('No event has this uid'),
        429: readsLimited,
      },
      handler: async ({ params }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        if (found) {
          const access = accessTo(ctx, visitorOf(req), found.event);
          if (!access.granted) throw locked(req, found);
          await readLimits.take(req, res, found.calendar.uid);
          await sendFeed(req, res, await eventFeed(ctx, found), access.personal ? 'private, no-store' : 'public, max-age=300');
          ctx.analytics.count(visitorOf(req), eventTarget(found), 'feed_fetch', 'event');
          return;
        }
        await readLimits.take(req, res, null);
        const feed = await goneEventFeed(ctx, params.uid);
        if (!feed) throw missing('Event');
        await sendFeed(req, res, feed, 'public, max-age=300');
      },
    }),
    defineRoute<{ uid: string }>({
      method: 'get',
      path: '/e/:uid',
      operationId: 'eventPage',
      summary: 'The event page, with its Add-to-calendar control',
      description:
        'The event\'s public page: title, time and place, then one Add-to-calendar control (a disclosure listing every platform, the one the visitor\'s User-Agent suggests first: the answer varies by User-Agent), a Get updates link to the event\'s own feed (`webcal://…/e/{uid}.ics`, not for protected events), the description (folded when long) and, when the event takes RSVPs, the answer form. Carries Open Graph and Twitter card tags and schema.org Event JSON-LD. Drafts, pending, rejected and deleted events are a 404; a protected event shows the access-code form (403) unless opened with its signed pair or unlock cookie.',
      tags,
      auth: false,
      page: true,
      params: eventUidParams,
      query: pageQuery,
      responses: { 200: html('The event page'), ...protectedResponses },
      handler: async ({ params }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        if (!found) throw missing('Event');
        const access = accessTo(ctx, visitorOf(req), found.event);
        if (!access.granted) throw locked(req, found);
        const page = await eventPageHtml(ctx, visitorOf(req), found, access);
        // The visitor's likely platform comes first in the page's control, in the visitor's language.
        res.set('Vary', PAGE_VARY);
        sendHtml(res, 200, page.html, { personal: page.personal });
        ctx.analytics.view(visitorOf(req), eventTarget(found));
      },
    }),
    defineRoute<{ uid: string; key: string }>({
      method: 'get',
      path: '/e/:uid/:key',
      operationId: 'eventPlatform',
      summary: 'Add the event to a calendar platform, or the embeddable widget',
      description:
        '`google`, `outlook_web`, `office365`, `yahoo`: 302 to that platform; the words the link adds (the rule in words, the link back to the page) are in the visitor\'s language, chosen as the pages choose it (`?lang=`, `Accept-Language`, the calendar\'s `locale`), so the answer varies with `Accept-Language`. `ics`, `apple`, `outlook`: the event as text/calendar. `auto`: the platform for the visitor\'s device (the page for bots and in-app browsers). `embed`: a small widget for an iframe (transparent, no margins, fits 300×200; it posts its height to the parent page as `{type: "calendar-service:embed-height", height}`). Protected events need the signed pair (`expires`, `signature`) or the unlock cookie. An .ics answer counts as a read of the event\'s calendar, per address and per calendar (429 past either limit).',
      tags,
      auth: false,
      page: true,
      params: eventUidParams.keys({ key: Joi.string().valid(...PLATFORM_KEYS, 'auto', 'embed').required() }),
      responses: {
        200: { description: 'The event as RFC 5545 text (ics, apple, outlook: text/calendar), or the widget (embed: text/html)', contentType: ['text/calendar', 'text/html'] },
        302: { description: 'To the platform\'s add-event page (google, outlook_web, office365, yahoo, and auto)' },
        ...protectedResponses,
        429: readsLimited,
      },
      handler: async ({ params }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        const known = isPlatformKey(params.key) || params.key === 'auto' || params.key === 'embed';
        if (!found || !known) {
          // A made-up event's .ics still counts against the address, so guessing uids is limited too.
          if (ICS_KEYS.includes(params.key)) await readLimits.take(req, res, null);
          throw missing('Event');
        }
        const access = accessTo(ctx, visitorOf(req), found.event);
        if (!access.granted) throw locked(req, found);
        const view = viewOf(found, base);
        if (params.key === 'embed') {
          const card = eventCard(view, linksWithAccess(view.pageUrl, access.query));
          res.set('Vary', PAGE_VARY);
          return sendHtml(res, 200, embedPage(card, likelyPlatform(req.headers['user-agent']), pageLocale(req, found.calendar.locale)), { personal: access.personal, frameable: true });
        }
        // auto's answer depends on the visitor's browser: caches must key it by User-Agent.
        if (params.key === 'auto') res.set('Vary', 'User-Agent');
        const key = params.key === 'auto' ? autoKey(req) : params.key;
        if (key === null || !isPlatformKey(key)) {
          res.set('Cache-Control', 'private, no-store').redirect(302, view.pageUrl + access.query);
          return;
        }
        if (ICS_KEYS.includes(key)) await readLimits.take(req, res, found.calendar.uid);
        const locale = pageLocale(req, found.calendar.locale);
        deliver(res, key, view, { uidHost, personal: access.personal, locale, webUrl: (platform) => webUrlOf(found, base, platform, locale) });
        ctx.analytics.count(visitorOf(req), eventTarget(found), 'add', key);
      },
    }),
    defineRoute<{ uid: string }, Record<string, never>, { access_code?: string }>({
      method: 'post',
      path: '/e/:uid/unlock',
      operationId: 'unlockEvent',
      summary: 'Open a protected event with its access code',
      description: `Form or JSON field \`access_code\`. The right code sets an HttpOnly cookie for this event (${UNLOCK_COOKIE_SECONDS / 3600} h) and answers 303 to the page (JSON: 200). ${UNLOCK_ATTEMPTS} wrong codes per event and address (an IPv6 address counts as its /64) in ${UNLOCK_WINDOW_SECONDS / 60} minutes answer 429, and so do ${UNLOCK_EVENT_ATTEMPTS} per event from all addresses together in ${UNLOCK_WINDOW_SECONDS / 60} minutes or ${UNLOCK_EVENT_DAILY_ATTEMPTS} in a day; a right code does not count.`,
      tags,
      auth: false,
      page: true,
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      params: eventUidParams,
      // Types only here; the rules are checked below, so that a browser gets the code form again.
      body: Joi.object({ access_code: Joi.string().allow('') }).unknown(true),
      before: unlockBody,
      responses: {
        200: { description: 'Unlocked (JSON requests)', body: Joi.object({ data: Joi.object({ unlocked: Joi.boolean().valid(true).required() }).required() }) },
        303: { description: 'Unlocked: to the event page' },
        403: pageError('Wrong code (the access-code page again; JSON with Accept: application/json)'),
        404: pageError('Unknown or unpublished event'),
        415: pageError('A body that is neither form-urlencoded nor JSON (not counted as a wrong code)'),
        422: { description: 'No access code, or one over 64 characters: the access-code page again (JSON with Accept: application/json); not counted as a wrong code', contentType: 'text/html', body: validationErrorSchema },
        429: pageError('Too many wrong codes (`Retry-After`)'),
      },
      handler: async ({ params }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        if (!found) throw missing('Event');
        const hash = found.event.access_code_hash;
        if (!hash) {
          res.redirect(303, `/e/${params.uid}`);
          return;
        }
        // A request without a code is not a guess: refused before the wrong-code count.
        const input = validatePart<{ access_code: string }>(unlockFields, req.body ?? {});
        if (Object.keys(input.errors).length) {
          throw validationFailed(input.errors).withPage(lockedPage(pageLocale(req, found.calendar.locale), params.uid, 'field_access_code'));
        }
        const tried = await tryAccessCode(ctx, unlockLimits, { uid: found.event.uid, access_code_hash: hash }, input.value.access_code, req.ip);
        if (tried.kind !== 'unlocked') {
          verdictHeaders(res, tried.verdict);
          if (tried.kind === 'too_many') throw tooManyRequests().withPage(lockedPage(pageLocale(req, found.calendar.locale), params.uid, 'lock_too_many'));
          throw locked(req, found, 'lock_wrong_code');
        }
        res.set('Set-Cookie', eventCookie(base, params.uid, unlockCookieName(params.uid), tried.cookieValue, UNLOCK_COOKIE_SECONDS));
        res.set('Cache-Control', 'no-store');
        if (wantsJson(req)) res.status(200).json({ data: { unlocked: true } });
        else res.redirect(303, `/e/${params.uid}`);
      },
    }),
    defineRoute<{ slug: string }>({
      method: 'get',
      path: '/l/:slug',
      operationId: 'shortLink',
      summary: 'A short link: 302 to the page of the event or calendar that owns it',
      description:
        'An event that is not public (draft, pending, rejected, deleted) answers like an unknown link. A protected event answers 403 (the access-code page; JSON with Accept: application/json) unless the link carries a valid `expires` + `signature` pair for it, which the redirect then carries on.',
      tags,
      auth: false,
      page: true,
      params: Joi.object({ slug: Joi.string().required() }),
      responses: {
        302: { description: 'To the event or calendar page' },
        403: protectedResponses[403],
        404: pageError('Unknown short link, or one of an event or calendar that is not public'),
      },
      handler: async ({ params }, req, res) => {
        const target = await shortLinkTarget(ctx, params.slug);
        if (!target) throw missing('Link');
        if ('calendar' in target) {
          res.set('Cache-Control', 'public, max-age=60').redirect(302, calendarPublicUrl(base, target.calendar.uid));
          return;
        }
        const found = target.event;
        // The unlock cookie is scoped to /e/{uid}, so only a signed pair opens a protected event here.
        const access = accessTo(ctx, visitorOf(req), found.event);
        if (!access.granted) throw locked(req, found);
        res.set('Cache-Control', cacheControl(access.personal)).redirect(302, `${base}/e/${found.event.uid}${access.query}`);
      },
    }),
    defineRoute<{ uid: string }>({
      method: 'get',
      path: '/c/:uid.ics',
      operationId: 'calendarFeed',
      summary: "The calendar's ICS subscription feed",
      description:
        `The published, unprotected events of the calendar that are going on or to come, and those that ended in the last \`feed_past_days\` days (default ${FEED_WINDOW.pastDays.default}), at most \`feed_max_events\` of them (default ${FEED_WINDOW.maxEvents.default}; upcoming ones first). The whole history is in the events API. Sent compressed (br or gzip) when the client accepts it. Conditional requests (\`If-None-Match\`, \`If-Modified-Since\`) answer 304. Each request counts as a read of the calendar, per address and per calendar (429 past either limit), and in analytics as a feed fetch of platform \`public\`.`,
      tags,
      auth: false,
      page: true,
      params: Joi.object({ uid: uidParam('calendar') }),
      responses: { 200: ics('The feed'), 304: { description: 'Not modified' }, 404: pageError('Unknown calendar'), 429: readsLimited },
      handler: async ({ params }, req, res) => {
        await readLimits.take(req, res, params.uid);
        let feed = ctx.caches.feeds.get(params.uid);
        if (!feed) {
          const calendar = await findCalendar(ctx, params.uid);
          if (!calendar) throw missing('Calendar');
          feed = await calendarFeed(ctx, calendar);
        }
        await sendFeed(req, res, feed, 'public, max-age=300');
        ctx.analytics.count(visitorOf(req), { teamId: feed.teamId, calendarId: feed.calendarId }, 'feed_fetch', 'public');
      },
    }),
    defineRoute<{ uid: string }, { page?: number }>({
      method: 'get',
      path: '/c/:uid',
      operationId: 'calendarPage',
      summary: 'The calendar page: upcoming events by month, and subscribe buttons',
      description:
        `The calendar's public page: the subscribe buttons for each platform, then its upcoming published events (protected ones left out) grouped by month, each with its Add-to-calendar control, ${CALENDAR_PAGE_EVENTS} to a page (\`page\`, up to ${CALENDAR_PAGES}). Each request counts as a read of the calendar, per address and per calendar (429 past either limit).`,
      tags,
      auth: false,
      page: true,
      params: Joi.object({ uid: uidParam('calendar') }),
      query: Joi.object({
        page: Joi.number().integer().min(1).max(CALENDAR_PAGES).description(`Which ${CALENDAR_PAGE_EVENTS} upcoming events: 1 (default) for the first`),
        lang: LANG_QUERY,
      }).unknown(true),
      responses: { 200: html('The calendar page'), 404: pageError('Unknown calendar'), 422: { description: 'A page number out of range, or a lang that is not one word', contentType: 'text/html', body: validationErrorSchema }, 429: readsLimited },
      handler: async ({ params, query }, req, res) => {
        await readLimits.take(req, res, params.uid);
        const calendar = await findCalendar(ctx, params.uid);
        if (!calendar) throw missing('Calendar');
        const pageNumber = query.page ?? 1;
        // One more than the page holds: whether there is a next page.
        const cards = await upcomingCards(ctx, calendar, CALENDAR_PAGE_EVENTS + 1, (pageNumber - 1) * CALENDAR_PAGE_EVENTS);
        ctx.analytics.view(visitorOf(req), { teamId: calendar.team_id, calendarId: calendar.id });
        const pageUrl = calendarPublicUrl(base, calendar.uid);
        const feedUrl = `${pageUrl}.ics`;
        // Each button records a subscriber with a personal feed, then goes to the platform.
        const subscribe = (platform: string) => `${pageUrl}/subscribe/${platform}`;
        const locale = pageLocale(req, calendar.locale);
        const t = translator(locale);
        // The pages after this one in the language asked for by the address, if it was.
        const lang = langParam(req);
        const pageAt = (n: number) => (n === 1 ? (lang ? `${pageUrl}?${lang}` : pageUrl) : `${pageUrl}?page=${n}${lang ? `&${lang}` : ''}`);
        res.set('Vary', PAGE_VARY);
        sendHtml(
          res,
          200,
          calendarPage({
            name: calendar.name,
            descriptionHtml: calendar.description,
            feedUrl,
            pageUrl,
            subscribe: [
              { label: t('apple'), href: subscribe('apple') },
              { label: t('google'), href: subscribe('google') },
              { label: t('outlook_web'), href: subscribe('outlook_web') },
              { label: t('office365'), href: subscribe('office365') },
              { label: t('cal_ics_feed'), href: subscribe('ics') },
            ],
            events: cards.slice(0, CALENDAR_PAGE_EVENTS),
            first: likelyPlatform(req.headers['user-agent']),
            previous: pageNumber > 1 ? pageAt(pageNumber - 1) : null,
            next: cards.length > CALENDAR_PAGE_EVENTS && pageNumber < CALENDAR_PAGES ? pageAt(pageNumber + 1) : null,
            locale,
          }),
        );
      },
    }),
    defineRoute<{ uid: string }>({
      method: 'get',
      path: '/c/:uid/embed',
      operationId: 'calendarEmbed',
      summary: "The calendar's widget for an iframe",
      description: `The calendar's next ${CALENDAR_EMBED_EVENTS} events, each with its Add-to-calendar control, and a link to subscribe; transparent, without margins, links open in a new tab. It posts its height to the parent page (\`{type: "calendar-service:embed-height", height}\`) so a loader snippet can size the iframe. Counts as a read of the calendar, per address and per calendar (429 past either limit).`,
      tags,
      auth: false,
      page: true,
      params: Joi.object({ uid: uidParam('calendar') }),
      query: pageQuery,
      responses: { 200: html('The widget'), 404: pageError('Unknown calendar'), 429: readsLimited },
      handler: async ({ params }, req, res) => {
        await readLimits.take(req, res, params.uid);
        const calendar = await findCalendar(ctx, params.uid);
        if (!calendar) throw missing('Calendar');
        const events = await upcomingCards(ctx, calendar, CALENDAR_EMBED_EVENTS);
        ctx.analytics.view(visitorOf(req), { teamId: calendar.team_id, calendarId: calendar.id });
        const pageUrl = calendarPublicUrl(base, calendar.uid);
        res.set('Vary', PAGE_VARY);
        sendHtml(res, 200, calendarEmbedPage({ name: calendar.name, pageUrl, subscribeUrl: pageUrl, events, first: likelyPlatform(req.headers['user-agent']), locale: pageLocale(req, calendar.locale) }), { frameable: true });
      },
    }),
  ];
}
