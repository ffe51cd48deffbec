import { type EventWithCalendar } from '../../shared/events/event-rows';
import type { TokenOwner } from '../../shared/accounts/accounts.repository';
import { type Invalidation, type InvalidationTarget, publishInvalidations } from '../../shared/cache/invalidation';
import { LiveCache } from './live-cache';
import type { Logger } from '../../shared/logging/logger';
import type { Redis } from '../../shared/queues/redis';
import type { DynamicLinkRow } from './dynamic-links/dynamic-links.repository';
import { type Feed, feedBytes } from './public/calendar-feed';
import type { KeyedLink } from './smart-links/smart-links.repository';
import type { SubscriberRow } from './subscribers/subscribers.repository';

/**
 * The gateway's read caches: token owners (every API request), events with their calendar
 * (single-event reads and every public page) and calendar feeds. All are kept correct by
 * the invalidation channel; see shared/cache.
 */
export class ReadCaches implements InvalidationTarget {
  readonly tokens = new LiveCache<TokenOwner>({ ttlMs: 10_000, max: 20_000 });
  readonly events = new LiveCache<EventWithCalendar>({ ttlMs: 30_000, max: 50_000 });
  /** Calendar feeds by calendar uid, compressed: at most 64 MiB of them. */
  readonly feeds = new LiveCache<Feed>({ ttlMs: 10 * 60_000, max: 1_000, weigh: feedBytes, maxWeight: 64 * 1024 * 1024 });
  /** Dynamic-link keys by uid. */
  readonly dynamicLinks = new LiveCache<DynamicLinkRow>({ ttlMs: 60_000, max: 10_000 });
  /** Smart links by key, for the ingest path (false: no such active link). */
  readonly smartLinks = new LiveCache<KeyedLink | false>({ ttlMs: 30_000, max: 20_000 });
  /** Subscribers by the hash of their personal feed token (false: no such subscriber). */
  readonly subscribers = new LiveCache<SubscriberRow | false>({ ttlMs: 60_000, max: 50_000 });

  constructor(
    private readonly redis: Redis,
    private readonly queuePrefix: string,
    private readonly logger: Logger,
  ) {}

  apply(items: Invalidation[]): void {
    for (const item of items) {
      if (item.kind === 'user') this.tokens.deleteWhere((owner) => owner.userId === item.id);
      else if (item.kind === 'event') this.events.delete(item.uid);
      else if (item.kind === 'calendar') {
        this.events.deleteWhere((found) => found.calendar.id === item.id);
        this.feeds.deleteWhere((feed) => feed.calendarId === item.id);
        this.smartLinks.deleteWhere((link) => link !== false && link.calendar_id === item.id);
      } else if (item.kind === 'calendar-events') this.feeds.deleteWhere((feed) => feed.calendarId === item.id);
      else if (item.kind === 'dynamic-link') this.dynamicLinks.delete(item.uid);
      else if (item.kind === 'smart-link') this.smartLinks.delete(item.key);
      else this.subscribers.delete(item.tokenHash);
    }
  }

  setLive(live: boolean): void {
    this.tokens.setLive(live);
    this.events.setLive(live);
    this.feeds.setLive(live);
    this.dynamicLinks.setLive(live);
    this.smartLinks.setLive(live);
    this.subscribers.setLive(live);
  }

  /** Drops the entries here at once, then tells every other process. Call after commit. */
  async invalidate(...items: Invalidation[]): Promise<void> {
    this.apply(items);
    await publishInvalidations(this.redis, this.queuePrefix, items, this.logger);
  }
}
