import { type EventWithCalendar } from '../../../shared/events/event-rows';
import type { Request, Response } from 'express';
import Joi from 'joi';
import { eventTarget } from '../analytics/analytics';
import { AppError, conflict, forbidden, httpError, tooManyRequests, validationFailed } from '../../../shared/errors/app-error';
import type { AppContext } from '../context';
import { visitorOf } from '../http/visitor';
import { authOf } from '../http/auth';
import { formOrJsonBody } from '../http/body';
import { contentDisposition } from '../http/content-disposition';
import { limitAddress } from '../http/client-address';
import { dataOf, errors, messageSchema, validationErrorSchema } from '../http/responses';
import { consumePoint, rateLimitHeaders, sharedLimiter } from '../http/rate-limits';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { idParam, toFieldErrors, uidParam } from '../http/validation';
import { accessTo, PROTECTED_MESSAGE, eventCard, eventCookie, eventView, findPublishedEvent } from '../public/public.service';
import { sendHtml } from '../public/page-response';
import { ANSWER_COOKIE_SECONDS, answerCookieName, UNLOCK_COOKIE_SECONDS, unlockCookieName } from '../../../shared/links/signatures';
import { eventPageHtml } from '../public/event-page';
import { wantsJson } from '../http/errors';
import { answerPage, cardWhen, errorPage, formProblems, lockedPage, type RsvpNotice } from '../public/views';
import { langParam, type Locale, type MessageKey, pageLocale, translator } from '../public/i18n';
import { missing } from '../public/page-response';
import { answerSchema, countsSchema, listRsvpsQuery, rsvpBody, type RsvpAnswer, type RsvpInput, rsvpParams, rsvpSchema } from './rsvps.schemas';
import { allRsvps, answerFromEmail, answerKeyOf, csvLine, deleteRsvp, type EmailAnswerer, findAnswerByKey, findEmailAnswerer, fullFor, listRsvps, unlockByAnswerKey, submitRsvp, toRsvpJson } from './rsvps.service';

const RSVP_WINDOW_SECONDS = 10 * 60;
/** The answer to an answer without its key, the same whether or not the address had answered. */
const RECEIVED = 'received';
const NO_RSVPS = 'This event does not take RSVPs.';


const emailAnswerBody = Joi.object({
  key: Joi.string().max(200).required(),
  answer: Joi.string().valid('yes', 'maybe', 'no').required(),
}).unknown(true);

export function rsvpRoutes(ctx: AppContext): RouteSpec[] {
  /** The event and the person an email button's key speaks for; a 404 or 409 page otherwise. */
  const emailAnswerer = async (req: Request, uid: string, key: string) => {
    const found = await findPublishedEvent(ctx, uid);
    if (!found) throw missing('Event');
    const locale = pageLocale(req, found.calendar.locale);
    const who = await findEmailAnswerer(ctx, found.event, key);
    if (!who) {
      const message = 'This answer link is not valid any more: you may have been taken off the guest list, or your answer removed.';
      throw httpError(404, message).withPage(errorPage(locale, 404, translator(locale)('answer_link_invalid')));
    }
    if (!found.event.has_rsvp) throw conflict(NO_RSVPS).withPage(errorPage(locale, 409, translator(locale)('answers_closed')));
    return { found, who, locale };
  };
  const answerPageFor = async (
    locale: Locale,
    found: EventWithCalendar,
    who: EmailAnswerer,
    key: string,
    answer: RsvpAnswer,
    more: { saved?: boolean; error?: MessageKey } = {},
  ) => {
    const view = eventView(found, ctx.config.publicBaseUrl);
    const full = await fullFor(ctx, found.event.id, who.email);
    return answerPage(locale, {
      title: view.title,
      when: cardWhen(eventCard(view, {}), locale),
      answer,
      action: `/e/${found.event.uid}/reply`,
      answerKey: key,
      who: who.name ? `${who.name} (${who.email})` : who.email,
      // A protected event's page needs its code: the email has its own signed link to it.
      pageUrl: found.event.access_code_hash ? null : view.pageUrl,
      full,
      ...more,
    });
  };

  const tags = ['RSVPs'];
  // Answers one address may send in ten minutes, across events (spam guard).
  const RSVP_ATTEMPTS = ctx.config.rsvpRatePer10Minutes;
  const limiter = sharedLimiter(ctx.redis, { keyPrefix: `${ctx.config.queuePrefix}:rl:rsvp`, points: RSVP_ATTEMPTS, durationSeconds: RSVP_WINDOW_SECONDS });
  const rsvpBodyParsers = formOrJsonBody('8kb');
  /** One of the address's RSVP_RATE_PER_10_MINUTES answers (the page's form and the email's buttons alike), or a 429. */
  const takeAnswerPoint = async (req: Request, res: Response) => {
    const { state, over } = await consumePoint(limiter, limitAddress(req.ip));
    rateLimitHeaders(res, RSVP_ATTEMPTS, state, over);
    if (over) throw tooManyRequests().withPage((locale) => errorPage(locale, 429, translator(locale)('too_many_answers')));
  };
  const eventParams = Joi.object({ cal: idParam('cal_'), evt: idParam('evt_') });

  return [
    defineRoute<{ uid: string }>({
      method: 'post',
      path: '/e/:uid/rsvp',
      operationId: 'rsvpToEvent',
      summary: 'Answer an event: yes, maybe or no (no token)',
      description: `Form-urlencoded or JSON (anything else is a 415): \`name\`, \`email\`, \`answer\`, and \`key\` to change an earlier answer. One answer per email per event. An answer without the \`key\` of the address's answer (in the body, or the event's cookie that the link in every RSVP email sets) is a 202 \`{"data":{"status":"${RECEIVED}"}}\` (a form: back to the page with \`?rsvp=${RECEIVED}\`), alike whether or not the address had answered, with no key and no cookie: an address that had not answered has its answer recorded and its key emailed to it (in the confirmation of a yes or maybe, or an answer link for a no); one that had keeps its answer, and is emailed its link when the answer would change (at most once an hour). With the key, the answer replaces the earlier one: a 200 with the answer and its key, which is set as the event's cookie (a form: \`?rsvp=thanks\`). A published event without \`has_rsvp\` is a 409. When \`rsvp_limit\` yes answers are in, a yes is a 409 (with the key, unless the answer already is a yes). Protected events need the same access as their page. A yes or maybe is confirmed by email (the event as an already-answered REQUEST); a yes or maybe changed to no gets a cancellation (METHOD:CANCEL), unless the person is also an invitee. These emails are in the language the page was shown in: \`?lang=\` on this address (the page's form keeps it), else the best of Accept-Language, else the calendar's \`locale\`. RSVP_RATE_PER_10_MINUTES answers per address in ${RSVP_WINDOW_SECONDS / 60} minutes.`,
      tags,
      auth: false,
      page: true,
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      params: Joi.object({ uid: uidParam('event') }),
      body: rsvpBody,
      bodyCheckedByHandler: true,
      before: rsvpBodyParsers,
      responses: {
        200: { description: "Saved, replacing the address's earlier answer whose `key` came with it (JSON requests): the answer and its `key`", body: dataOf(answerSchema) },
        202: {
          description: "Received, without the key of the address's answer: the same answer whether or not the address had answered (see the description)",
          body: dataOf(Joi.object({ status: Joi.string().valid(RECEIVED).required() })),
        },
        303: { description: `Back to the event page with a note: \`?rsvp=${RECEIVED}\` as for the 202, \`?rsvp=thanks\` as for the 200` },
        403: { description: 'Protected event without access', contentType: 'text/html', body: messageSchema },
        404: { description: 'Unknown or unpublished event', contentType: 'text/html', body: messageSchema },
        409: { description: 'The event takes no RSVPs (`has_rsvp` false), or it is full (`{"message"}`)', contentType: 'text/html', body: messageSchema },
        413: { description: 'Body over 8 KB', contentType: 'text/html', body: messageSchema },
        415: { description: 'A body that is neither form-urlencoded nor JSON', contentType: 'text/html', body: messageSchema },
        422: { description: 'Missing or invalid name, email or answer', contentType: 'text/html', body: validationErrorSchema },
        429: { description: 'Too many answers from this address (`Retry-After`)', contentType: 'text/html', body: messageSchema },
      },
      handler: async ({ params }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        if (!found) throw missing('Event');
        const locale = pageLocale(req, found.calendar.locale);
        const access = accessTo(ctx, visitorOf(req), found.event);
        if (!access.granted) throw forbidden(PROTECTED_MESSAGE).withPage(lockedPage(locale, params.uid));
        // The event exists and its page is open: what it refuses is the answer, not the address.
        if (!found.event.has_rsvp) throw conflict(NO_RSVPS);
        await takeAnswerPoint(req, res);
        // A refused answer from the page's form: the page again, with what was typed and
        // each problem beside its field, instead of a page that only says what went wrong.
        const formAgain = async (errors: Record<string, string[]>) => {
          const entered = (req.body ?? {}) as Record<string, unknown>;
          const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 255) : undefined);
          return (await eventPageHtml(ctx, visitorOf(req), found, access, { entered: { name: text(entered.name), email: text(entered.email), answer: text(entered.answer) }, errors })).html;
        };
        const { value, error } = rsvpBody.validate(req.body ?? {}, { abortEarly: false });
        if (error) {
          const fieldErrors = toFieldErrors(error);
          throw validationFailed(fieldErrors).withPage(await formAgain(formProblems(locale, fieldErrors)));
        }
        const input = value as RsvpInput;
        input.key ??= visitorOf(req).cookies[answerCookieName(params.uid)];
        try {
          // Its emails are in the language the page was shown in (the person chose it): see pageLocale.
          const { row, held, proven } = await submitRsvp(ctx, found, input, req.id, { locale });
          if (!held) ctx.analytics.count(visitorOf(req), eventTarget(found), 'rsvp', row.answer);
          res.set('Cache-Control', 'no-store');
          const lang = langParam(req);
          const back = (notice: RsvpNotice) => `/e/${params.uid}${access.query ? `${access.query}&` : '?'}rsvp=${notice}${lang ? `&${lang}` : ''}`;
          if (!proven) {
            // Without the answer's key, one answer whether or not the address had answered:
            // no key, no cookie, nothing that tells the two apart (see submitRsvp).
            if (wantsJson(req)) res.status(202).json({ data: { status: RECEIVED } });
            else res.redirect(303, back(RECEIVED));
            return;
          }
          // Whoever sent the answer's key holds it already: the answer, and the key kept in this browser.
          const key = answerKeyOf(ctx, found.event, row);
          res.set('Set-Cookie', eventCookie(ctx.config.publicBaseUrl, params.uid, answerCookieName(params.uid), key, ANSWER_COOKIE_SECONDS));
          if (wantsJson(req)) res.status(200).json({ data: { ...toRsvpJson(row), key } });
          else res.redirect(303, back('thanks'));
        } catch (err) {
          if (err instanceof AppError && err.status === 409 && !wantsJson(req)) {
            const t = translator(locale);
            err.withPage(await formAgain(input.answer === 'yes' ? { answer: [t('rsvp_full')] } : { form: [t('answers_closed')] }));
          }
          throw err;
        }
      },
    }),
    defineRoute<{ uid: string }, { key: string }>({
      method: 'get',
      path: '/e/:uid/rsvp',
      operationId: 'rsvpAnswerLink',
      summary: "An answer's link (from RSVP emails): keeps its key in this browser, then shows the event page",
      description:
        "Sets the answer's key as a cookie for the event (and, for a protected event, the unlock cookie, when the key was made under the event's current access code and the event still takes RSVPs: a new code revokes what the key opens, not the answer it changes), then 303 to the event page, where a new answer from the same email replaces the old one. A key that is not valid (the answer was removed) is a 404 page.",
      tags,
      auth: false,
      page: true,
      params: Joi.object({ uid: uidParam('event') }),
      query: Joi.object({ key: Joi.string().max(200).required() }).unknown(true),
      responses: {
        303: { description: 'To the event page' },
        404: { description: 'Unknown or unpublished event, or a key that opens no answer of it', contentType: 'text/html', body: messageSchema },
      },
      handler: async ({ params, query }, req, res) => {
        const found = await findPublishedEvent(ctx, params.uid);
        const valid = found ? await findAnswerByKey(ctx, found.event, query.key) : undefined;
        res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
        if (!found) throw missing('Event');
        if (!valid) {
          const locale = pageLocale(req, found.calendar.locale);
          const message = 'This answer link is not valid any more: the answer was removed. You can answer again on the event page.';
          throw httpError(404, message).withPage(errorPage(locale, 404, translator(locale)('answer_link_removed')));
        }
        const base = ctx.config.publicBaseUrl;
        const cookies = [eventCookie(base, params.uid, answerCookieName(params.uid), query.key, ANSWER_COOKIE_SECONDS)];
        const unlock = unlockByAnswerKey(ctx, found.event, valid, query.key);
        if (unlock) cookies.push(eventCookie(base, params.uid, unlockCookieName(params.uid), unlock, UNLOCK_COOKIE_SECONDS));
        res.set('Set-Cookie', cookies).redirect(303, `/e/${params.uid}#rsvp-title`);
      },
    }),
    defineRoute<{ uid: string }, { key: string; answer: RsvpAnswer }>({
      method: 'get',
      path: '/e/:uid/reply',
      operationId: 'emailAnswerPage',
      summary: "An email's answer button: shows the answer, which one more click records",
      description:
        'The Yes / Maybe / No buttons of invitations, updates, RSVP confirmations and reminders (events with `has_rsvp`) open this page, signed for the person the email went to (`key`). Opening it changes nothing (mail scanners and link previews open links); its button POSTs the answer. No access code is needed for a protected event: the key is the proof. A key that is not valid any more (the invitee or answer was removed) is a 404 page.',
      tags,
      auth: false,
      page: true,
      params: Joi.object({ uid: uidParam('event') }),
      query: Joi.object({ key: Joi.string().max(200).required(), answer: Joi.string().valid('yes', 'maybe', 'no').required() }).unknown(true),
      responses: {
        200: { description: 'The page with the answer button', contentType: 'text/html' },
        404: { description: 'Unknown or unpublished event, or a key that is not valid for it', contentType: 'text/html', body: messageSchema },
        409: { description: 'The event takes no RSVPs any more', contentType: 'text/html', body: messageSchema },
      },
      handler: async ({ params, query }, req, res) => {
        const { found, who, locale } = await emailAnswerer(req, params.uid, query.key);
        sendHtml(res, 200, await answerPageFor(locale, found, who, query.key, query.answer), { personal: true });
      },
    }),
    defineRoute<{ uid: string }>({
      method: 'post',
      path: '/e/:uid/reply',
      operationId: 'emailAnswer',
      summary: "Record the answer of an email's button",
      description: `Form fields \`key\` (from the email's link) and \`answer\`. Recorded as the RSVP of the address the email went to (replacing its earlier answer without needing the answer's key: the signed link is the proof), with the same \`rsvp_limit\`, confirmation email and webhooks as the page's form; when that address is invited, also as the invitee's \`response\` (an \`invitee.replied\` webhook). A full event refuses a new yes (409, the page again with the other answers). RSVP_RATE_PER_10_MINUTES answers per address in ${RSVP_WINDOW_SECONDS / 60} minutes.`,
      tags,
      auth: false,
      page: true,
      consumes: ['application/x-www-form-urlencoded'],
      params: Joi.object({ uid: uidParam('event') }),
      body: emailAnswerBody,
      bodyCheckedByHandler: true,
      before: rsvpBodyParsers,
      responses: {
        200: { description: 'Saved: a page that says so', contentType: 'text/html' },
        404: { description: 'Unknown or unpublished event, or a key that is not valid for it', contentType: 'text/html', body: messageSchema },
        409: { description: 'The event takes no RSVPs any more, or it is full (for a yes)', contentType: 'text/html', body: messageSchema },
        413: { description: 'Body over 8 KB, or more than 20 form fields', contentType: 'text/html', body: messageSchema },
        415: { description: 'A body that is neither form-urlencoded nor JSON', contentType: 'text/html', body: messageSchema },
        422: { description: 'Missing key or answer', contentType: 'text/html', body: validationErrorSchema },
        429: { description: 'Too many answers from this address (`Retry-After`)', contentType: 'text/html', body: messageSchema },
      },
      handler: async ({ params }, req, res) => {
        const { value, error } = emailAnswerBody.validate(req.body ?? {}, { abortEarly: false });
        if (error) {
          const fieldErrors = toFieldErrors(error);
          throw validationFailed(fieldErrors).withPage((locale) => errorPage(locale, 422, translator(locale)('answer_unreadable')));
        }
        const input = value as { key: string; answer: RsvpAnswer };
        const { found, who, locale } = await emailAnswerer(req, params.uid, input.key);
        await takeAnswerPoint(req, res);
        try {
          const { row } = await answerFromEmail(ctx, found, who, input.answer, req.id, locale);
          ctx.analytics.count(visitorOf(req), eventTarget(found), 'rsvp', row.answer);
          sendHtml(res, 200, await answerPageFor(locale, found, who, input.key, input.answer, { saved: true }), { personal: true });
        } catch (err) {
          if (err instanceof AppError && err.status === 409) {
            err.withPage(await answerPageFor(locale, found, who, input.key, input.answer, { error: input.answer === 'yes' ? 'rsvp_full' : 'answers_closed' }));
          }
          throw err;
        }
      },
    }),
    defineRoute<{ cal: string; evt: string }, { answer?: string; per_page: number; cursor?: string }>({
      method: 'get',
      path: '/api/calendars/:cal/events/:evt/rsvps',
      operationId: 'listRsvps',
      summary: "The event's RSVPs, with totals per answer",
      description: 'The event\'s answers (name, email, answer, times), oldest first, filtered by `answer`, a page at a time (`per_page`, `cursor`); `meta.totals` counts each answer.',
      tags,
      auth: true,
      params: eventParams,
      query: listRsvpsQuery,
      responses: {
        200: {
          description: 'A page of RSVPs',
          body: Joi.object({
            data: Joi.array().items(rsvpSchema).required(),
            meta: Joi.object({ per_page: Joi.number().integer().required(), next_cursor: Joi.string().allow(null).required(), totals: countsSchema.required() }).required(),
          }),
        },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ params, query }, req) => {
        const page_ = await listRsvps(ctx, authOf(req).teamId, params.cal, params.evt, query);
        const e = page_.found.event;
        return ok({
          data: page_.rows.map(toRsvpJson),
          meta: { per_page: query.per_page, next_cursor: page_.nextCursor, totals: { yes: e.rsvp_yes, maybe: e.rsvp_maybe, no: e.rsvp_no } },
        });
      },
    }),
    defineRoute<{ cal: string; evt: string }>({
      method: 'get',
      path: '/api/calendars/:cal/events/:evt/rsvps.csv',
      operationId: 'exportRsvps',
      summary: "The event's RSVPs as CSV",
      description: 'Every answer of the event as CSV (RFC 4180, UTF-8): id, name, email, answer, created and updated times, oldest first. Cells that a spreadsheet would read as a formula are prefixed with a quote.',
      tags,
      auth: true,
      params: eventParams,
      responses: { 200: { description: 'id,name,email,answer,created_at,updated_at', contentType: 'text/csv' }, ...errors(401, 404, 503) },
      handler: async ({ params }, req, res) => {
        const { found } = await listRsvps(ctx, authOf(req).teamId, params.cal, params.evt, { per_page: 1 });
        res
          .status(200)
          .type('text/csv; charset=utf-8')
          .set('Content-Disposition', contentDisposition('attachment', { ascii: `rsvps-evt_${found.event.uid}.csv` }))
          .set('Cache-Control', 'no-store');
        res.write(csvLine(['id', 'name', 'email', 'answer', 'created_at', 'updated_at']));
        for await (const row of allRsvps(ctx, found.event.id)) {
          const r = toRsvpJson(row);
          res.write(csvLine([r.id, r.name, r.email, r.answer, r.created_at, r.updated_at]));
        }
        res.end();
      },
    }),
    defineRoute<{ cal: string; evt: string; rsvp: string }>({
      method: 'delete',
      path: '/api/calendars/:cal/events/:evt/rsvps/:rsvp',
      operationId: 'deleteRsvp',
      summary: 'Remove an RSVP (its place is free again)',
      description:
        'A yes or maybe had put the event in that person\'s calendar, so they are queued a cancellation for themselves (METHOD:CANCEL, a higher SEQUENCE; the event goes on), unless they are also an invitee, whose invitation stands.',
      tags,
      auth: true,
      params: rsvpParams,
      responses: {
        200: {
          description: 'Removed',
          body: dataOf(Joi.object({ id: Joi.string().required(), deleted: Joi.boolean().valid(true).required(), cancellation_queued: Joi.boolean().required() })),
        },
        ...errors(401, 404, 503),
      },
      handler: async ({ params }, req) => {
        const { row, queued } = await deleteRsvp(ctx, authOf(req).teamId, { calPublicId: params.cal, evtPublicId: params.evt, rsvpPublicId: params.rsvp }, req.id);
        return ok({ data: { id: `rsvp_${row.uid}`, deleted: true, cancellation_queued: queued } });
      },
    }),
  ];
}
