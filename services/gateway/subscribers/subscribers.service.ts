import { type CalendarRow } from '../../../shared/events/event-rows';
import { calendarPublicUrl } from '../../../shared/events/event-json';
import { recordWebhookEvent } from '../../../shared/webhooks/outbox';
import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { idListing } from '../http/cursor';
import { subscribeUrls } from '../calendar/platform-urls';
import { notFound } from '../../../shared/errors/app-error';
import { sameDigest } from '../../../shared/accounts/tokens';
import { newUid, randomBase62, sha256Hex, uidFromPublicId } from '../../../shared/ids/ids';
import { requireCalendar } from '../calendars/calendars.service';
import type { AppContext } from '../context';
import type { SubscribePlatform } from './subscribers.schemas';
import {
  deleteSubscriber as deleteRow,
  findByTokenHash,
  findSubscriber,
  insertSubscriber,
  listSubscribers as listRows,
  setStatus,
  type SubscriberRow,
} from './subscribers.repository';

type Deps = Pick<AppContext, 'db' | 'caches' | 'config' | 'counters' | 'clock'>;

const SUBSCRIBERS = idListing('subscribers');

/** A subscriber's own feed address: the calendar's feed, counted per fetch, blockable. */
const personalFeedUrl = (baseUrl: string, calendarUid: string, token: string) => `${calendarPublicUrl(baseUrl, calendarUid)}/feeds/${token}.ics`;

/** Where a platform subscribes to a feed address (`ics`: the address itself). */
export function platformSubscribeUrl(platform: SubscribePlatform, feedUrl: string, calendarName: string): string {
  return platform === 'ics' ? feedUrl : subscribeUrls(feedUrl, calendarName)[platform];
}

export function toSubscriberJson(row: SubscriberRow, calendarUid: string, baseUrl: string) {
  return {
    id: `sub_${row.uid}`,
    platform: row.platform,
    name: row.name,
    email: row.email,
    status: row.status,
    sync_count: row.sync_count,
    last_synced_at: row.last_synced_at ? pgTimestampToIsoMicros(row.last_synced_at) : null,
    feed_url: personalFeedUrl(baseUrl, calendarUid, row.feed_token),
    created_at: pgTimestampToIsoMicros(row.created_at),
    updated_at: pgTimestampToIsoMicros(row.updated_at),
  };
}

/** Records a subscriber with a personal feed address; answers where to send the browser. */
export async function subscribe(deps: Deps, calendar: CalendarRow, platform: SubscribePlatform, details: { name?: string; email?: string } = {}) {
  const feedToken = randomBase62(32);
  const row = await deps.db.transaction(async (trx) => {
    const inserted = await insertSubscriber(trx, {
      uid: newUid(),
      feed_token: feedToken,
      feed_token_hash: sha256Hex(feedToken),
      calendar_id: calendar.id,
      team_id: calendar.team_id,
      platform,
      name: details.name ?? null,
      email: details.email ?? null,
    });
    await recordWebhookEvent(trx, {
      teamId: calendar.team_id,
      type: 'subscriber.created',
      resource: `subscriber:${inserted.uid}`,
      data: toSubscriberJson(inserted, calendar.uid, deps.config.publicBaseUrl),
      at: deps.clock.now(),
    });
    return inserted;
  });
  const feed = personalFeedUrl(deps.config.publicBaseUrl, calendar.uid, row.feed_token);
  return { subscriber: row, redirect: platformSubscribeUrl(platform, feed, calendar.name) };
}

/**
 * The subscriber behind a personal feed token (cached while the invalidation feed is live).
 * Found by the token's SHA-256, like API tokens, so no comparison's time depends on how
 * much of the secret a guess got right.
 */
export async function subscriberByToken(deps: Deps, token: string): Promise<SubscriberRow | null> {
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return null;
  const hash = sha256Hex(token);
  let row = deps.caches.subscribers.get(hash);
  if (row === undefined) {
    const startedAt = deps.caches.subscribers.begin();
    row = (await findByTokenHash(deps.db, hash)) ?? false;
    deps.caches.subscribers.set(hash, row, startedAt);
  }
  return row && sameDigest(row.feed_token_hash, hash) ? row : null;
}

/** Counts a fetch of a personal feed: added up in memory, written every few seconds. */
export const countSync = (deps: Deps, subscriber: SubscriberRow) => deps.counters.subscriberSyncs.add(subscriber.id);

async function requireSubscriber(deps: Deps, teamId: number, calPublicId: string, subPublicId: string) {
  const calendar = await requireCalendar(deps.db, teamId, calPublicId);
  const uid = uidFromPublicId('sub_', subPublicId);
  const row = uid ? await findSubscriber(deps.db, calendar.id, uid) : undefined;
  if (!row) throw notFound('Subscriber');
  return { calendar, row };
}

export async function listSubscribers(deps: Deps, teamId: number, calPublicId: string, q: { status?: string; platform?: string; per_page: number; cursor?: string }) {
  const calendar = await requireCalendar(deps.db, teamId, calPublicId);
  const afterId = SUBSCRIBERS.after(deps.config.appKey, q.cursor)?.[0];
  const rows = await listRows(deps.db, calendar.id, { status: q.status, platform: q.platform, afterId, limit: SUBSCRIBERS.fetchLimit(q.per_page) });
  return { calendar, ...SUBSCRIBERS.page(deps.config.appKey, rows, q.per_page, (last) => [last.id]) };
}

export async function updateSubscriber(deps: Deps, teamId: number, calPublicId: string, subPublicId: string, status: 'active' | 'blocked') {
  const { calendar, row } = await requireSubscriber(deps, teamId, calPublicId, subPublicId);
  const updated = await setStatus(deps.db, row.id, status);
  await deps.caches.invalidate({ kind: 'subscriber', tokenHash: row.feed_token_hash });
  return { calendar, row: updated };
}

export async function deleteSubscriber(deps: Deps, teamId: number, calPublicId: string, subPublicId: string) {
  const { row } = await requireSubscriber(deps, teamId, calPublicId, subPublicId);
  await deleteRow(deps.db, row.id);
  await deps.caches.invalidate({ kind: 'subscriber', tokenHash: row.feed_token_hash });
  return row;
}
