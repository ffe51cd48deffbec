import type { Logger } from '../logging/logger';
import { closeRedis, createSubscriber, type Redis, type RedisTarget } from '../queues/redis';

/** What changed: the caches of every gateway drop what depends on it. */
export type Invalidation =
  | { kind: 'user'; id: number } // tokens revoked
  | { kind: 'event'; uid: string } // an event changed or went away
  | { kind: 'calendar'; id: number } // a calendar changed (events embed it) or went away
  | { kind: 'calendar-events'; id: number } // the events of a calendar changed (its feed)
  | { kind: 'dynamic-link'; uid: string } // a dynamic-link key was deleted
  | { kind: 'smart-link'; key: string } // a smart link changed, was deleted or got a new secret
  | { kind: 'subscriber'; tokenHash: string }; // a subscriber was blocked, unblocked or removed

const invalidationChannel = (queuePrefix: string) => `${queuePrefix}:invalidations`;

/** Publishes changes; a failure is logged, not thrown (listeners that miss it are off anyway). */
export async function publishInvalidations(redis: Redis, queuePrefix: string, items: Invalidation[], logger: Logger): Promise<void> {
  if (!items.length) return;
  try {
    await redis.publish(invalidationChannel(queuePrefix), JSON.stringify(items));
  } catch (err) {
    logger.warn({ err, items }, 'could not publish cache invalidations');
  }
}

export interface InvalidationTarget {
  apply(items: Invalidation[]): void;
  setLive(live: boolean): void;
}

/**
 * Subscribes to the invalidation channel. The target's caches are switched on once the
 * subscription is confirmed and off (and emptied) whenever the connection drops, since
 * messages published meanwhile are lost.
 */
export function listenForInvalidations(redis: RedisTarget, queuePrefix: string, target: InvalidationTarget, logger: Logger): () => Promise<void> {
  const channel = invalidationChannel(queuePrefix);
  const sub = createSubscriber(redis, 'calendar-invalidations');
  sub.on('error', (err) => logger.debug({ err: err.message }, 'invalidation subscriber error'));
  sub.on('ready', () => {
    sub.subscribe(channel).then(
      () => target.setLive(true),
      (err) => logger.warn({ err }, 'could not subscribe to cache invalidations'),
    );
  });
  sub.on('close', () => target.setLive(false));
  sub.on('message', (_channel: string, message: string) => {
    try {
      target.apply(JSON.parse(message) as Invalidation[]);
    } catch (err) {
      logger.warn({ err }, 'bad invalidation message');
    }
  });
  return async () => {
    target.setLive(false);
    await closeRedis(sub);
  };
}
