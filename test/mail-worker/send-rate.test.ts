import { closeRedis, createRedis, type Redis, whenReady } from '../../shared/queues/redis';
import { sendRate, unlimited } from '../../services/mail-worker/send-rate';
import { TestClock } from '../helpers/gateway';

let redis: Redis;
beforeAll(async () => {
  redis = createRedis(process.env.TEST_REDIS_URL as string, 'client');
  await whenReady(redis, 5000);
});
afterAll(() => closeRedis(redis));

describe('the send rate (MAIL_RATE_PER_SECOND)', () => {
  it('lets the allowance through in a second, across workers, and holds the rest for the next second', async () => {
    const clock = new TestClock();
    clock.set('2026-01-01T00:00:00.100Z');
    const waited: number[] = [];
    // Waiting moves the test clock instead of the wall clock.
    const wait = async (ms: number) => {
      waited.push(ms);
      clock.advance(ms);
    };
    const key = `{rate-test-${process.pid}-${Date.now()}}`;
    const workerA = sendRate(redis, key, 3, clock, wait);
    const workerB = sendRate(redis, key, 3, clock, wait);

    await workerA.take();
    await workerB.take();
    await workerA.take();
    expect(waited).toEqual([]);
    await workerB.take(); // the fourth in this second: waits for the next one
    expect(waited).toEqual([900]);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.000Z');
    await workerA.take();
    await workerA.take();
    expect(waited).toEqual([900]);
    await workerB.take();
    expect(waited).toEqual([900, 1000]);
  });

  it('is no limit at all when set to 0', async () => {
    const broken = { status: 'end', eval: () => Promise.reject(new Error('must not be called')) } as unknown as Redis;
    const rate = sendRate(broken, 'x', 0, new TestClock());
    expect(rate).toBe(unlimited);
    await expect(rate.take()).resolves.toBeUndefined();
  });
});
