import type { Clock } from '../../shared/lifecycle/clock';
import { type Redis, whenReady } from '../../shared/queues/redis';

/** Waits for a turn to send one message. */
export interface SendRate {
  take(): Promise<void>;
}

export const unlimited: SendRate = { take: async () => undefined };

// Counts one send in this second's window and keeps the counter only as long as it matters.
const COUNT = `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], 2000) end return n`;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * MAIL_RATE_PER_SECOND across every mail worker: a counter per second in Redis (so all
 * workers share it), and a message over the limit waits for the next second. Jobs hold a
 * batch of messages, so the limit is counted per message here rather than per job by
 * BullMQ's limiter.
 */
export function sendRate(redis: Redis, keyPrefix: string, perSecond: number, clock: Clock, wait: (ms: number) => Promise<void> = sleep): SendRate {
  if (perSecond <= 0) return unlimited;
  return {
    async take() {
      for (;;) {
        // The connection fails fast while not ready; a worker that just started waits for it.
        if (redis.status !== 'ready') await whenReady(redis, 5000);
        const now = clock.now().getTime();
        const count = (await redis.eval(COUNT, 1, `${keyPrefix}:mail-rate:${Math.floor(now / 1000)}`)) as number;
        if (count <= perSecond) return;
        await wait(1000 - (now % 1000));
      }
    },
  };
}
