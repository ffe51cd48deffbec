import Joi from 'joi';
import { AppError } from '../../../shared/errors/app-error';
import type { OptOut } from '../../../shared/links/signatures';
import type { AppContext } from '../context';
import { invalidOptOut, optOut, optOutEvent } from './reminders.service';
import { messageSchema, validationErrorSchema } from '../http/responses';
import { defineRoute, type RouteSpec } from '../http/route';
import { uidParam } from '../http/validation';
import { missing, sendHtml } from '../public/page-response';
import { errorPage, optOutPage } from '../public/views';
import { pageLocale, translator } from '../public/i18n';

const optOutQuery = Joi.object({
  email: Joi.string().max(254).required().description('The address, as the link names it'),
  signature: Joi.string().max(100).required().description('HMAC of what is stopped, the event and the address (made by the service)'),
}).unknown(true);

const refused = () => invalidOptOut().withPage((locale) => errorPage(locale, 403, translator(locale)('optout_invalid')));

/** What each opt-out's page and POST say and do (its URL and signature: shared/links/signatures.ts). */
const OPT_OUT_ROUTES: Record<OptOut, { path: string; operationId: string; getSummary: string; getDescription: string; postSummary: string; postDescription: string }> = {
  reminders: {
    path: '/e/:uid/reminders/unsubscribe',
    operationId: 'reminderUnsubscribe',
    getSummary: "A reminder's unsubscribe link, opened: a button that stops them (changes nothing itself)",
    getDescription:
      'The page behind the link in every email reminder: it names the address and the event and has a button that POSTs the same URL. Opening it stops nothing, so a mail scanner that follows links unsubscribes no one.',
    postSummary: "Stop an event's email reminders to one address (RFC 8058 one-click; no token)",
    postDescription:
      "The URL of each reminder's `List-Unsubscribe` header (with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`): a POST records that the address wants no more reminders for this event (its invitation, updates and RSVP messages still come) and answers a page saying so; again, the same. Any body is accepted and ignored (mail clients send `List-Unsubscribe=One-Click`). The link is signed for the event and the address and does not expire.",
  },
  all: {
    path: '/e/:uid/unsubscribe',
    operationId: 'teamMailUnsubscribe',
    getSummary: "A message's unsubscribe link, opened: a button that stops all email from the event's organizer (changes nothing itself)",
    getDescription:
      'The page behind the unsubscribe link of every invitation, update, cancellation and RSVP message: it names the address and the event and has a button that POSTs the same URL. Opening it stops nothing, so a mail scanner that follows links unsubscribes no one.',
    postSummary: "Stop all email from the event's team to one address (RFC 8058 one-click; no token)",
    postDescription:
      "The URL of the `List-Unsubscribe` header of every message but reminders: a POST puts the address on the team's suppression list (`GET /api/mail-suppressions`, reason `unsubscribed`), so no message of that team, for any event, is sent to it again (each is recorded `skipped`), and answers a page saying so; again, the same. Other teams' email is not affected. Any body is accepted and ignored. The link is signed for the event and the address and does not expire.",
  },
};

/**
 * The one-click opt-outs (RFC 8058): each message names its recipient's signed URL in
 * List-Unsubscribe, which mail clients POST. A GET shows a button that POSTs it and changes
 * nothing (mail scanners follow links).
 */
export function unsubscribeRoutes(ctx: AppContext): RouteSpec[] {
  const tags = ['Public pages'];
  const responses = (ok: string) => ({
    200: { description: ok, contentType: 'text/html' },
    403: { description: "The signature is not this link's, event's and address's", contentType: 'text/html', body: messageSchema },
    404: { description: 'Unknown event (one deleted since still takes its links)', contentType: 'text/html', body: messageSchema },
    422: { description: 'email or signature missing', contentType: 'text/html', body: validationErrorSchema },
  });
  /**
   * The event the link names, deleted or not (a cancellation's link is followed after its
   * event is gone), its signature checked.
   */
  const eventOf = async (what: OptOut, uid: string, query: { email: string; signature: string }) => {
    try {
      const found = await optOutEvent(ctx, what, uid, query);
      if (!found) throw missing('Event');
      return found;
    } catch (err) {
      throw err instanceof AppError && err.status === 403 ? refused() : err;
    }
  };
  const params = Joi.object({ uid: uidParam('event') });
  const routes = (what: OptOut): RouteSpec[] => {
    const r = OPT_OUT_ROUTES[what];
    return [
      defineRoute<{ uid: string }, { email: string; signature: string }>({
        method: 'get',
        path: r.path,
        operationId: `${r.operationId}Page`,
        summary: r.getSummary,
        description: r.getDescription,
        tags,
        auth: false,
        page: true,
        params,
        query: optOutQuery,
        responses: responses('The page with the button'),
        handler: async ({ params: p, query }, req, res) => {
          const event = await eventOf(what, p.uid, query);
          const action = `${r.path.replace(':uid', p.uid)}?${new URLSearchParams({ email: query.email, signature: query.signature }).toString()}`;
          sendHtml(res, 200, optOutPage(pageLocale(req, event.locale), what, { title: event.title, email: query.email, action, done: false }), { personal: true });
        },
      }),
      defineRoute<{ uid: string }, { email: string; signature: string }>({
        method: 'post',
        path: r.path,
        operationId: r.operationId,
        summary: r.postSummary,
        description: r.postDescription,
        tags,
        auth: false,
        page: true,
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
        params,
        query: optOutQuery,
        responses: responses('Unsubscribed'),
        handler: async ({ params: p, query }, req, res) => {
          const event = await eventOf(what, p.uid, query);
          await optOut(ctx, what, event, query.email);
          sendHtml(res, 200, optOutPage(pageLocale(req, event.locale), what, { title: event.title, email: query.email, action: '', done: true }), { personal: true });
        },
      }),
    ];
  };
  return [...routes('reminders'), ...routes('all')];
}
