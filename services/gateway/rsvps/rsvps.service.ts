import { type EventWithCalendar } from '../../../shared/events/event-rows';
import { recordWebhookEvent } from '../../../shared/webhooks/outbox';
import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { applyMailQuota } from '../../../shared/mail/mail-quota';
import { idListing } from '../http/cursor';
import { conflict, notFound } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import type { Knex } from '../../../shared/db/knex';
import type { Locale } from '../../../shared/i18n/translations';
import { isCancelKind, isRsvpKind, type MailKind } from '../../../shared/queues/mail.job';
import type { AppContext } from '../context';
import { findEvent } from '../events/events.repository';
import { requireEvent } from '../events/events.service';
import { type MailDeps, queueDeliveries } from '../../../shared/mail/queue-mail';
import { type AnswerEvent, type AnswerHolder, answerKey, answerKeyRsvpUid, answerKeyUnlocks, unlockCookieValue, inviteeKeyUid, verifyAnswerKey, verifyInviteeAnswerKey } from '../../../shared/links/signatures';
import { findInvitee, findInviteesByEmail, raiseSequence } from '../invites/invites.repository';
import { RESPONSE_OF_ANSWER, recordInviteeResponse } from '../../../shared/invites/responses';
import {
  adjustCounts,
  answerLinksSent,
  deleteRsvp as deleteRow,
  findByEmail,
  findRsvp,
  findRsvpByUid,
  insertRsvpDelivery,
  insertRsvp,
  lastMessageTo,
  listRsvps as listRows,
  lockEventForRsvp,
  type RsvpRow,
  updateRsvp,
} from './rsvps.repository';
import type { RsvpAnswer, RsvpInput } from './rsvps.schemas';

type Deps = Pick<AppContext, 'db' | 'caches' | 'config'>;

const RSVPS = idListing('rsvps');
/** What a change that may email the person needs. */
type MailingDeps = Deps & MailDeps;

export function toRsvpJson(row: RsvpRow) {
  return {
    id: `rsvp_${row.uid}`,
    name: row.name,
    email: row.email,
    answer: row.answer,
    created_at: pgTimestampToIsoMicros(row.created_at),
    updated_at: pgTimestampToIsoMicros(row.updated_at),
  };
}

/** Tells the team's webhooks of an answer, with the event it answers, in the transaction of the change. */
const announceRsvp = (trx: Knex, deps: Pick<AppContext, 'clock'>, type: 'rsvp.created' | 'rsvp.updated' | 'rsvp.deleted', found: EventWithCalendar, row: RsvpRow) =>
  recordWebhookEvent(trx, {
    teamId: found.event.team_id,
    type,
    resource: `rsvp:${row.uid}`,
    data: { ...toRsvpJson(row), event_id: `evt_${found.event.uid}` },
    at: deps.clock.now(),
  });

/**
 * Whether this answer is what put the event in the person's calendar: a yes or maybe was
 * confirmed with a calendar part; an invitee has it by their invitation instead.
 */
async function inCalendarByRsvpAlone(trx: Knex, rsvp: RsvpRow): Promise<boolean> {
  if (rsvp.answer !== 'yes' && rsvp.answer !== 'maybe') return false;
  return !(await findInviteesByEmail(trx, rsvp.event_id, [rsvp.email])).length;
}

const holderOf = (eventUid: string, rsvp: RsvpRow): AnswerHolder => ({ eventUid, rsvpUid: rsvp.uid, email: rsvp.email });

/** The answer's key, which changes it (and, for a protected event, opens it under its current code: see answerKey). */
export const answerKeyOf = (deps: Pick<MailDeps, 'config'>, event: AnswerEvent, rsvp: RsvpRow) => answerKey(deps.config.appKey, holderOf(event.uid, rsvp), event);

/**
 * The unlock cookie's value an answer's link earns for a protected event, or null: only a
 * key made under the event's current code, while it takes RSVPs, opens it. A new code, or
 * an event that stopped taking answers, leaves the key able to change the answer and no more.
 */
export function unlockByAnswerKey(deps: Pick<MailDeps, 'config'> & Pick<AppContext, 'clock'>, event: AnswerEvent & { access_code_hash: string | null }, rsvp: RsvpRow, key: unknown): string | null {
  const hash = event.access_code_hash;
  if (!hash || !answerKeyUnlocks(deps.config.appKey, holderOf(event.uid, rsvp), event, key)) return null;
  return unlockCookieValue(deps.config.appKey, { uid: event.uid, access_code_hash: hash }, deps.clock.now().getTime());
}

/** The answer a key opens (one of this event's, key verified), or undefined. */
export async function findAnswerByKey(deps: Pick<AppContext, 'db' | 'config'>, event: { id: number; uid: string }, key: unknown): Promise<RsvpRow | undefined> {
  const rsvpUid = answerKeyRsvpUid(key);
  const row = rsvpUid ? await findRsvpByUid(deps.db, event.id, rsvpUid) : undefined;
  return row && verifyAnswerKey(deps.config.appKey, holderOf(event.uid, row), key) ? row : undefined;
}

/** The link in RSVP messages: it gives the browser the answer's key, then shows the event page. */
const answerUrl = (deps: Pick<MailDeps, 'config'>, event: AnswerEvent, rsvp: RsvpRow) =>
  `${deps.config.publicBaseUrl}/e/${event.uid}/rsvp?key=${answerKeyOf(deps, event, rsvp)}`;

/** What became of a message to one person: queued, made but skipped (the team's email quota, a suppressed address), or made before (at this SEQUENCE). */
type Told = 'queued' | 'skipped' | 'made before';

/**
 * One message about the event to the person who gave this answer: a delivery row and its
 * job, in the caller's transaction (which holds the event row lock).
 */
async function tellPerson(
  trx: Knex,
  deps: MailDeps,
  p: { found: EventWithCalendar; rsvp: RsvpRow; kind: MailKind; sequence: number; requestId?: string; locale?: Locale },
): Promise<Told> {
  const inserted = await insertRsvpDelivery(trx, { rsvp: p.rsvp, kind: p.kind, sequence: p.sequence });
  if (!inserted.length) return 'made before';
  // A visitor's answer stands whatever the team's email quota; past it, its message is skipped.
  const deliveries = await applyMailQuota(trx, p.found.event.team_id, inserted, deps.clock.now(), 'skip');
  if (!deliveries.length) return 'skipped';
  // The event as it is now, under the lock (the page's copy may be a moment old).
  const current = (await findEvent(trx, null, p.found.event.uid)) ?? p.found;
  // Messages about their own answer carry its link; a removal (the answer is gone) does not.
  const link = isRsvpKind(p.kind) ? answerUrl(deps, p.found.event, p.rsvp) : undefined;
  await queueDeliveries(trx, deps, { found: current, kind: p.kind, sequence: p.sequence, deliveries, requestId: p.requestId, answerUrl: link, locale: p.locale });
  return 'queued';
}

const eventFull = () => conflict('This event is full: no more places for a yes.');

/**
 * One answer per email per event; a second answer replaces the first, when it comes with
 * the first one's key (`proven`: the address gets it in every RSVP message, and the browser
 * that followed such a message's link keeps it in a cookie). Anyone can type an address, so
 * an answer without that proof tells its sender nothing about the address, and hands out no
 * key: whether the address had answered or not, the caller learns the same (`proven` false).
 * An address that had not answered has its answer recorded at once, and its key is emailed
 * to it: in the confirmation of a yes or maybe, else (a first no, or a confirmation made
 * before at this SEQUENCE) in an answer link (kind `rsvp_link`). An address that had
 * answered keeps its answer (`held`): a changed answer sends mail to it and can take the
 * event out of that person's calendar. The address is sent its link instead (at most one an
 * hour), and only if the answer would change. A full event refuses a yes without proof
 * whoever the address, even the one whose yes holds a place, so a refusal does not tell
 * either. The event row is locked for the change, so `rsvp_limit` holds however many answer
 * at once. A yes or maybe is confirmed by email (a delivery row and a mail job, in the same
 * transaction: if the job cannot be queued, the answer is not stored either). A yes or maybe
 * changed to no is answered with a cancellation to that person (unless they are also an
 * invitee, whose invitation stands), since the confirmation put the event in their
 * calendar. A confirmation after a cancellation to the same address carries a higher
 * SEQUENCE, so the calendar app takes the event back.
 */
export async function submitRsvp(
  deps: MailingDeps,
  found: EventWithCalendar,
  input: RsvpInput,
  requestId?: string,
  opts: {
    /** The answer comes with proof that it is the address's own (a signed link sent to it): no key needed. */
    addressVerified?: boolean;
    /** Also done in the answer's transaction, once it is saved. */
    onSaved?: (trx: Knex, row: RsvpRow) => Promise<void>;
    /** The language of the page the answer was given on: its messages are written in it (else the calendar's). */
    locale?: Locale;
  } = {},
): Promise<{ row: RsvpRow; created: boolean; held: boolean; proven: boolean }> {
  const result = await deps.db.transaction(async (trx) => {
    const event = await lockEventForRsvp(trx, found.event.id);
    if (!event || !event.has_rsvp) throw notFound('Event');
    const existing = await findByEmail(trx, event.id, input.email);
    const proven = !!opts.addressVerified || (existing !== undefined && verifyAnswerKey(deps.config.appKey, holderOf(found.event.uid, existing), input.key));
    const full = event.rsvp_limit !== null && event.rsvp_yes >= event.rsvp_limit;
    if (!proven && input.answer === 'yes' && full) throw eventFull();
    if (existing && !proven) {
      const changes = existing.answer !== input.answer || existing.name !== input.name;
      // At most one an hour: the address cannot be flooded, yet can ask again for a lost one.
      // An answer link changes no calendar, so its `sequence` only numbers the links sent.
      const links = changes ? await answerLinksSent(trx, event.id, existing.email) : null;
      if (links && !links.recent) await tellPerson(trx, deps, { found, rsvp: existing, kind: 'rsvp_link', sequence: links.sent, requestId, locale: opts.locale });
      return { row: existing, created: false, held: true, proven };
    }
    const becomesYes = input.answer === 'yes' && existing?.answer !== 'yes';
    if (becomesYes && full) throw eventFull();
    const row = existing
      ? await updateRsvp(trx, existing.id, { name: input.name, answer: input.answer })
      : await insertRsvp(trx, { uid: newUid(), event_id: event.id, team_id: found.event.team_id, name: input.name, email: input.email, answer: input.answer });
    await adjustCounts(trx, event.id, existing?.answer ?? null, input.answer);
    await announceRsvp(trx, deps, existing ? 'rsvp.updated' : 'rsvp.created', found, row);

    const tell = (kind: MailKind, sequence: number) => tellPerson(trx, deps, { found, rsvp: row, kind, sequence, requestId, locale: opts.locale });
    let confirmation: Told | undefined;
    if (input.answer !== 'no') {
      const last = await lastMessageTo(trx, event.id, input.email);
      const outranked = last !== undefined && isCancelKind(last.kind) && last.sequence >= event.sequence;
      const sequence = outranked ? await raiseSequence(trx, event.id, last.sequence + 1) : event.sequence;
      confirmation = await tell(input.answer === 'yes' ? 'rsvp_yes' : 'rsvp_maybe', sequence);
    } else if (existing && (await inCalendarByRsvpAlone(trx, existing))) {
      await tell('rsvp_no', await raiseSequence(trx, event.id));
    }
    // A new answer given without its address's proof: its key reaches the address by email
    // only. When no confirmation carries it, the answer link does (a skipped confirmation
    // would see its link skipped alike).
    if (!existing && !proven && (confirmation === undefined || confirmation === 'made before')) {
      await tell('rsvp_link', (await answerLinksSent(trx, event.id, row.email)).sent);
    }
    if (opts.onSaved) await opts.onSaved(trx, row);
    return { row, created: !existing, held: false, proven };
  });
  await deps.caches.invalidate({ kind: 'event', uid: found.event.uid });
  return result;
}

export async function listRsvps(deps: Deps, teamId: number, calPublicId: string, evtPublicId: string, q: { answer?: string; per_page: number; cursor?: string }) {
  const found = await requireEvent(deps.db, teamId, evtPublicId, { calPublicId });
  const afterId = RSVPS.after(deps.config.appKey, q.cursor)?.[0];
  const rows = await listRows(deps.db, found.event.id, { answer: q.answer, afterId, limit: RSVPS.fetchLimit(q.per_page) });
  return { found, ...RSVPS.page(deps.config.appKey, rows, q.per_page, (last) => [last.id]) };
}

/**
 * Removes one answer (its place is free again). A yes or maybe had put the event in that
 * person's calendar through its confirmation, so they are sent a cancellation for
 * themselves (kind `removal`, a raised SEQUENCE), unless they are also an invitee, whose
 * invitation stands. Answers the row and whether a cancellation was queued.
 */
export async function deleteRsvp(
  deps: MailingDeps,
  teamId: number,
  target: { calPublicId: string; evtPublicId: string; rsvpPublicId: string },
  requestId?: string,
): Promise<{ row: RsvpRow; queued: boolean }> {
  const uid = uidFromPublicId('rsvp_', target.rsvpPublicId);
  const found = await requireEvent(deps.db, teamId, target.evtPublicId, { calPublicId: target.calPublicId });
  const result = await deps.db.transaction(async (trx) => {
    await lockEventForRsvp(trx, found.event.id);
    const existing = uid ? await findRsvp(trx, found.event.id, uid) : undefined;
    if (!existing) throw notFound('RSVP');
    const queued =
      (await inCalendarByRsvpAlone(trx, existing)) &&
      (await tellPerson(trx, deps, { found, rsvp: existing, kind: 'removal', sequence: await raiseSequence(trx, found.event.id), requestId })) === 'queued';
    await deleteRow(trx, existing.id);
    await adjustCounts(trx, found.event.id, existing.answer, null);
    await announceRsvp(trx, deps, 'rsvp.deleted', found, existing);
    return { row: existing, queued };
  });
  await deps.caches.invalidate({ kind: 'event', uid: found.event.uid });
  return result;
}

/** Every RSVP of the event, page by page (for the CSV export). */
export async function* allRsvps(deps: Deps, eventId: number): AsyncGenerator<RsvpRow> {
  let afterId: number | undefined;
  for (;;) {
    const rows = await listRows(deps.db, eventId, { afterId, limit: 1000 });
    yield* rows;
    if (rows.length < 1000) return;
    afterId = rows[rows.length - 1].id;
  }
}

const csvCell = (value: string) => {
  // Cells a spreadsheet would run as a formula are prefixed with a quote.
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export const csvLine = (cells: string[]) => `${cells.map(csvCell).join(',')}\r\n`;

/** Whose answer an email's button carries: an invitee (their key) or the giver of an RSVP (its key), verified. */
export interface EmailAnswerer {
  email: string;
  name: string | null;
}

/**
 * Whether a yes can no longer be given by this address, now: every place is taken (read
 * from the event's row, not a cached copy), and none of them is this address's.
 */
export async function fullFor(deps: Pick<AppContext, 'db'>, eventId: number, email: string): Promise<boolean> {
  const counts: { rsvp_yes: number; rsvp_limit: number | null } | undefined = await deps.db('events').first('rsvp_yes', 'rsvp_limit').where({ id: eventId });
  if (counts === undefined || counts.rsvp_limit === null || counts.rsvp_yes < counts.rsvp_limit) return false;
  return (await findByEmail(deps.db, eventId, email))?.answer !== 'yes';
}

/** The person an email button's key speaks for (verified), or undefined. */
export async function findEmailAnswerer(deps: Pick<AppContext, 'db' | 'config'>, event: { id: number; uid: string }, key: unknown): Promise<EmailAnswerer | undefined> {
  const inviteeUid = inviteeKeyUid(key);
  if (inviteeUid) {
    const invitee = await findInvitee(deps.db, event.id, inviteeUid);
    const valid = invitee && verifyInviteeAnswerKey(deps.config.appKey, { eventUid: event.uid, inviteeUid, email: invitee.email }, key);
    return valid ? { email: invitee.email, name: invitee.name } : undefined;
  }
  const row = await findAnswerByKey(deps, event, key);
  return row ? { email: row.email, name: row.name } : undefined;
}

/**
 * An answer from an email's Yes / Maybe / No buttons: an RSVP like the page's (the same
 * `rsvp_limit`, confirmation and webhooks), given by the address the email went to, so it
 * replaces that address's earlier answer without its key; and, when the address is
 * invited, that invitee's response (`invitee.replied`), in the same transaction.
 */
export async function answerFromEmail(deps: MailingDeps, found: EventWithCalendar, who: EmailAnswerer, answer: RsvpAnswer, requestId?: string, locale?: Locale) {
  const earlier = await findByEmail(deps.db, found.event.id, who.email);
  const name = who.name ?? earlier?.name ?? who.email;
  return submitRsvp(deps, found, { name, email: who.email, answer }, requestId, {
    addressVerified: true,
    locale,
    onSaved: async (trx) => {
      const [invitee] = await findInviteesByEmail(trx, found.event.id, [who.email]);
      if (!invitee) return;
      await recordInviteeResponse(trx, {
        inviteeId: invitee.id,
        teamId: found.event.team_id,
        eventUid: found.event.uid,
        response: RESPONSE_OF_ANSWER[answer],
        at: deps.clock.now(),
      });
    },
  });
}
