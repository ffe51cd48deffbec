import { closeRedis, createRedis, createSubscriber } from '../../shared/queues/redis';
import { freePort } from '../helpers/processes';
import { isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';

describe('Redis connections', () => {
  it("a cluster's subscriber moves to the next seed when one does not answer", async () => {
    // Nothing listens on the first seed; the run's Redis (a plain server takes SUBSCRIBE as
    // any cluster node does) is the second.
    const closed = `redis://127.0.0.1:${await freePort()}`;
    const sub = createSubscriber({ cluster: [closed, process.env.TEST_REDIS_URL as string] }, 'test-subscriber');
    sub.on('error', () => undefined);
    const pub = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
    const channel = `${isolatedPrefix('subscriber')}:channel`;
    const received: string[] = [];
    sub.on('message', (_channel: string, message: string) => received.push(message));
    try {
      await sub.subscribe(channel);
      await pub.publish(channel, 'hello');
      await waitFor(() => received.length === 1, { what: 'the message through the second seed' });
      expect(received).toEqual(['hello']);
      expect(sub.options.port).toBe(Number(new URL(process.env.TEST_REDIS_URL as string).port || 6379));
    } finally {
      await closeRedis(sub);
      await closeRedis(pub);
    }
  });
});
