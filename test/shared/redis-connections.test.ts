import { closeRedis, createRedis, createSubscriber, isRedisUnavailableError } from '../../shared/queues/redis';
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

  it("tells a cluster's outages (a 503) from bad commands (a 500)", () => {
    const unavailable = [
      Object.assign(new Error('CLUSTERDOWN The cluster is down'), { name: 'ReplyError' }),
      new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'),
      Object.assign(new Error('Failed to refresh slots cache.'), { name: 'ClusterAllFailedError' }),
      new Error("Cluster isn't ready and enableOfflineQueue options is false"),
      new Error('None of startup nodes is available'),
      Object.assign(new Error('TRYAGAIN Multiple keys request during rehashing of slot'), { name: 'ReplyError' }),
      Object.assign(new Error('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no'), { name: 'ReplyError' }),
    ];
    for (const err of unavailable) expect([err.message, isRedisUnavailableError(err)]).toEqual([err.message, true]);
    const bugs = [
      Object.assign(new Error("CROSSSLOT Keys in request don't hash to the same slot"), { name: 'ReplyError' }),
      new Error('All the keys in a pipeline command should belong to the same slot'),
      Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' }),
    ];
    for (const err of bugs) expect([err.message, isRedisUnavailableError(err)]).toEqual([err.message, false]);
  });
});
