import { type EventWithCalendar } from '../../../shared/events/event-rows';
import type { AppContext } from '../context';
import { findAnswerByKey } from '../rsvps/rsvps.service';
import { type Access, eventCard, eventFeedUrl, linksWithAccess, viewOf } from './public.service';
import { likelyPlatform } from './add-to-calendar';
import { withParam } from './i18n';
import type { Visitor } from '../http/visitor';
import { answerCookieName } from '../../../shared/links/signatures';
import { eventPage, type RsvpForm, rsvpNotice } from './views';

/**
 * The event page as a visitor gets it (the platform of the visitor's browser first in its
 * Add-to-calendar control: the page varies by User-Agent, and its language by `?lang=` or
 * Accept-Language), with its RSVP form when the event takes answers: the
 * answer this browser holds the key to, or (after a refused answer) what the visitor typed
 * with each problem beside its field.
 */
export async function eventPageHtml(
  ctx: Pick<AppContext, 'db' | 'config'>,
  visitor: Visitor,
  found: EventWithCalendar,
  access: Extract<Access, { granted: true }>,
  refused?: RsvpForm,
): Promise<{ html: string; personal: boolean }> {
  const view = viewOf(found, ctx.config.publicBaseUrl);
  // The answer, and the platforms' links, keep a language asked for by the address (the
  // answer's emails and the words a link adds are written in it).
  const { lang } = visitor;
  const card = eventCard(view, linksWithAccess(view.pageUrl, withParam(access.query, lang)));
  const e = found.event;
  // A browser holding an answer's key (see rsvps) sees that answer, and the form starts from it.
  const key = e.has_rsvp ? visitor.cookies[answerCookieName(e.uid)] : undefined;
  const yours = key ? await findAnswerByKey(ctx, e, key) : undefined;
  const rsvp = e.has_rsvp
    ? {
        action: `/e/${e.uid}/rsvp${withParam(access.query, lang)}`,
        counts: { yes: e.rsvp_yes, maybe: e.rsvp_maybe, no: e.rsvp_no },
        limit: e.rsvp_limit,
        notice: refused ? undefined : rsvpNotice(visitor.query.rsvp),
        yours: yours && { name: yours.name, email: yours.email, answer: yours.answer },
        refused,
      }
    : undefined;
  // The event's own feed, to follow its changes: not for a protected event (its feed would
  // need the signed pair, which expires).
  const updatesUrl = e.access_code_hash ? null : eventFeedUrl(view.pageUrl).replace(/^https?:\/\//, 'webcal://');
  const first = likelyPlatform(visitor.userAgent);
  // A page with RSVP counts changes with every answer: not for shared caches.
  return { html: eventPage(card, { imageUrl: view.imageUrl, rsvp, first, updatesUrl, locale: visitor.locale(found.calendar.locale) }), personal: access.personal || e.has_rsvp };
}
