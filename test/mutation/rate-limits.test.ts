import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { consumePoint, PlanRateLimits, RateLimiterRes, rateLimitHeaders, type SharedLimiter, sharedLimiter, verdictHeaders } from '../../services/gateway/http/rate-limits';
import { randomBase62 } from '../../shared/ids/ids';
import { createRedis, type RedisServer, whenReady } from '../../shared/queues/redis';
import { waitFor } from '../helpers/wait';
import { TcpProxy } from '../helpers/tcp-proxy';

/*
 * The rate limits every gateway shares through Redis, against the real Redis of the test
 * run (TEST_REDIS_URL; a key prefix of this file's own), and the fallback while Redis is
 * away, with the connection cut by a TCP proxy in between. What a client sees is the
 * point counted or refused and the headers (X-RateLimit-*, RFC 9110's Retry-After); what
 * the other gateways see is the count in Redis.
 */

const REDIS_URL = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{mut_rl_${randomBase62(8)}}`;
let redis: RedisServer;
let proxy: TcpProxy;
let viaProxy: RedisServer;

beforeAll(async () => {
  redis = createRedis(REDIS_URL.toString(), 'client');
  proxy = await TcpProxy.start({ host: REDIS_URL.hostname, port: Number(REDIS_URL.port || 6379) });
  const proxied = new URL(REDIS_URL.toString());
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  viaProxy = createRedis(proxied.toString(), 'client');
  await Promise.all([whenReady(redis, 5000), whenReady(viaProxy, 5000)]);
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  viaProxy.disconnect();
  await proxy.cut();
});

let serial = 0;
const unique = (name: string) => `${prefix}:${name}${++serial}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Redis away: the proxy refuses connections and the client has noticed. */
async function redisAway(): Promise<void> {
  await proxy.cut();
  await waitFor(() => viaProxy.status !== 'ready', { what: 'the client to notice Redis is away' });
}

async function redisBack(): Promise<void> {
  await proxy.restore();
  await whenReady(viaProxy, 5000);
}

/** What consume answers: the state, or the refusal it throws. */
async function outcome(limiter: SharedLimiter, key: string): Promise<{ over: boolean; remaining: number }> {
  const { state, over } = await consumePoint(limiter, key);
  return { over, remaining: state.remainingPoints };
}

describe('a limit shared through Redis', () => {
  it('counts each point in Redis, where every gateway sees it, and refuses past the limit', async () => {
    const keyPrefix = unique('shared');
    const one = sharedLimiter(redis, { keyPrefix, points: 3, durationSeconds: 60 });
    const other = sharedLimiter(viaProxy, { keyPrefix, points: 3, durationSeconds: 60 });
    expect(await outcome(one, 'k')).toEqual({ over: false, remaining: 2 });
    expect(await outcome(other, 'k')).toEqual({ over: false, remaining: 1 });
    expect(await redis.get(`${keyPrefix}:k`)).toBe('2');
    expect(await outcome(one, 'k')).toEqual({ over: false, remaining: 0 });
    const refused = await consumePoint(other, 'k');
    expect(refused.over).toBe(true);
    expect(refused.state.remainingPoints).toBe(0);
    expect(refused.state.msBeforeNext).toBeGreaterThan(55_000);
    expect(refused.state.msBeforeNext).toBeLessThanOrEqual(60_000);
    // Another key has a count of its own.
    expect(await outcome(one, 'k2')).toEqual({ over: false, remaining: 2 });
    await expect(one.consume('k')).rejects.toBeInstanceOf(RateLimiterRes);
  });

  it('blocks for blockSeconds once past the limit, and only for its window without', async () => {
    const blocked = sharedLimiter(redis, { keyPrefix: unique('block'), points: 1, durationSeconds: 2, blockSeconds: 300 });
    await blocked.consume('k');
    const { state, over } = await consumePoint(blocked, 'k');
    expect(over).toBe(true);
    expect(state.msBeforeNext).toBeGreaterThan(250_000);
    const plain = sharedLimiter(redis, { keyPrefix: unique('noblock'), points: 1, durationSeconds: 2 });
    await plain.consume('k');
    const second = await consumePoint(plain, 'k');
    expect(second.over).toBe(true);
    expect(second.state.msBeforeNext).toBeLessThanOrEqual(2000);
  });

  it('gives a point back in Redis', async () => {
    const keyPrefix = unique('reward');
    const limiter = sharedLimiter(redis, { keyPrefix, points: 2, durationSeconds: 60 });
    await limiter.consume('k');
    await limiter.consume('k');
    await limiter.reward('k');
    expect(await redis.get(`${keyPrefix}:k`)).toBe('1');
    expect(await outcome(limiter, 'k')).toEqual({ over: false, remaining: 0 });
  });
});

describe('while Redis is away', () => {
  afterEach(redisBack);

  it('allows a quarter of the limit, at least one, in each process', async () => {
    const eight = sharedLimiter(viaProxy, { keyPrefix: unique('quarter'), points: 8, durationSeconds: 60 });
    const three = sharedLimiter(viaProxy, { keyPrefix: unique('one'), points: 3, durationSeconds: 60 });
    await redisAway();
    expect(await outcome(eight, 'k')).toEqual({ over: false, remaining: 1 });
    expect(await outcome(eight, 'k')).toEqual({ over: false, remaining: 0 });
    expect((await outcome(eight, 'k')).over).toBe(true);
    expect(await outcome(three, 'k')).toEqual({ over: false, remaining: 0 });
    expect((await outcome(three, 'k')).over).toBe(true);
  });

  it('adds what each key used meanwhile to its shared count when Redis answers again, once', async () => {
    const keyPrefix = unique('owed');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 20, durationSeconds: 60 });
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 19 });
    await redisAway();
    for (let i = 0; i < 4; i++) await limiter.consume('a');
    await limiter.consume('b');
    await redisBack();
    // 1 before, 4 during the outage, 1 now.
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 14 });
    expect(await redis.get(`${keyPrefix}:a`)).toBe('6');
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 13 });
    expect(await outcome(limiter, 'b')).toEqual({ over: false, remaining: 18 });
  });

  it('carries the outage count into a refusal too, and forgets it then', async () => {
    const keyPrefix = unique('owed-over');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 4, durationSeconds: 60 });
    await limiter.consume('a');
    await limiter.consume('a');
    await limiter.consume('a');
    await redisAway();
    await limiter.consume('a');
    await redisBack();
    // 3 + 1 owed + 1 is past 4: refused, and counted (5).
    expect((await outcome(limiter, 'a')).over).toBe(true);
    expect(await redis.get(`${keyPrefix}:a`)).toBe('5');
    await redis.del(`${keyPrefix}:a`);
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 3 });
  });

  it('gives a point back where it was counted', async () => {
    const keyPrefix = unique('owed-reward');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 8, durationSeconds: 60 });
    await limiter.consume('fresh');
    await redisAway();
    await limiter.consume('a');
    await limiter.consume('a');
    // The outage count goes down by one, and so does the local window.
    await limiter.reward('a');
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 0 });
    await limiter.reward('a');
    await limiter.reward('a');
    // A key counted only in Redis is given its point back locally while Redis is away.
    await limiter.reward('fresh');
    expect(await outcome(limiter, 'fresh')).toEqual({ over: false, remaining: 2 });
    await redisBack();
    // 'a': 2 - 1 - 2 owed (never below none), so only this point reaches Redis.
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 7 });
    // 'fresh': 1 in Redis, 1 owed, 1 now.
    expect(await outcome(limiter, 'fresh')).toEqual({ over: false, remaining: 5 });
  });

  it('forgets an outage count once its window is over', async () => {
    const keyPrefix = unique('owed-expiry');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 8, durationSeconds: 1 });
    await redisAway();
    await limiter.consume('a');
    await limiter.consume('a');
    await redisBack();
    await sleep(1100);
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 7 });
  });
});

describe('consumePoint', () => {
  it('lets anything but a refusal through', async () => {
    const broken = { consume: () => Promise.reject(new Error('no Redis and no insurance')) } as unknown as SharedLimiter;
    await expect(consumePoint(broken, 'k')).rejects.toThrow('no Redis and no insurance');
  });
});

/** A real response, to read back the headers it would send. */
const response = () => new ServerResponse(new IncomingMessage(new Socket()));

describe('the headers', () => {
  it('report the limit and what is left, with Retry-After in whole seconds (at least 1) only when over', () => {
    const ok = response();
    rateLimitHeaders(ok, 10, new RateLimiterRes(7, 12_345), false);
    expect(ok.getHeaders()).toEqual({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '7' });
    const over = response();
    rateLimitHeaders(over, 10, new RateLimiterRes(-2, 12_001), true);
    expect(over.getHeaders()).toEqual({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'retry-after': '13' });
    const soon = response();
    rateLimitHeaders(soon, 10, new RateLimiterRes(0, 40), true);
    expect(soon.getHeader('retry-after')).toBe('1');
  });

  it("write a verdict's numbers as they are", () => {
    const ok = response();
    verdictHeaders(ok, { over: false, limit: 60, remaining: 59, retryAfterSeconds: 60 });
    expect(ok.getHeaders()).toEqual({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59' });
    const over = response();
    verdictHeaders(over, { over: true, limit: 60, remaining: 0, retryAfterSeconds: 42 });
    expect(over.getHeaders()).toEqual({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'retry-after': '42' });
  });
});

describe('per-plan limits', () => {
  it('count nothing when no check limits anything', async () => {
    const limits = new PlanRateLimits(redis, unique('plan'));
    expect(await limits.take([])).toBeNull();
    expect(await limits.take([{ scope: 'api-token', key: 1, perMinute: null }])).toBeNull();
  });

  it('count a request against every limit, and report the one closest to its end', async () => {
    const planPrefix = unique('plan');
    const limits = new PlanRateLimits(redis, planPrefix);
    const checks = [
      { scope: 'api-token', key: 7, perMinute: 5 },
      { scope: 'api-team', key: 7, perMinute: 3 },
      { scope: 'extraction', key: 7, perMinute: null },
    ];
    const first = await limits.take(checks);
    expect(first).toMatchObject({ over: false, limit: 3, remaining: 2 });
    expect(first?.retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect(first?.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await redis.get(`${planPrefix}:rl:api-token:7`)).toBe('1');
    expect(await redis.get(`${planPrefix}:rl:api-team:7`)).toBe('1');
    expect(await redis.keys(`${planPrefix}:rl:extraction*`)).toEqual([]);
    // The key as text: 7 and '7' are one window.
    expect(await limits.take([{ scope: 'api-token', key: '7', perMinute: 5 }])).toMatchObject({ over: false, limit: 5, remaining: 3 });
    expect(await limits.take(checks)).toMatchObject({ over: false, limit: 3, remaining: 1 });
    expect(await limits.take([checks[1], checks[0]])).toMatchObject({ over: false, limit: 3, remaining: 0 });
    const refused = await limits.take(checks);
    expect(refused).toMatchObject({ over: true, limit: 3, remaining: 0 });
    expect(refused?.retryAfterSeconds).toBeGreaterThanOrEqual(59);
  });

  it('keep one window per scope and key, whatever the plan says the limit is now', async () => {
    const planPrefix = unique('plan');
    const limits = new PlanRateLimits(redis, planPrefix);
    for (let i = 0; i < 3; i++) await limits.take([{ scope: 'api-token', key: 1, perMinute: 5 }]);
    // Upgraded to 10 a minute: the three already counted still count.
    expect(await limits.take([{ scope: 'api-token', key: 1, perMinute: 10 }])).toMatchObject({ over: false, limit: 10, remaining: 6 });
    expect(await limits.take([{ scope: 'api-token', key: 1, perMinute: 5 }])).toMatchObject({ over: false, limit: 5, remaining: 0 });
    // Another scope, another key: windows of their own.
    expect(await limits.take([{ scope: 'api-team', key: 1, perMinute: 5 }])).toMatchObject({ over: false, remaining: 4 });
    expect(await limits.take([{ scope: 'api-token', key: 2, perMinute: 5 }])).toMatchObject({ over: false, remaining: 4 });
  });

  it('report, of two refusals, the one that lasts longer', async () => {
    const limits = new PlanRateLimits(redis, unique('plan'));
    const early = { scope: 'api-token', key: 1, perMinute: 1 };
    const late = { scope: 'api-team', key: 1, perMinute: 2 };
    await limits.take([early]);
    await sleep(1100);
    await limits.take([late]);
    await limits.take([late]);
    expect(await limits.take([early, late])).toMatchObject({ over: true, limit: 2, retryAfterSeconds: 60 });
    expect(await limits.take([late, early])).toMatchObject({ over: true, limit: 2, retryAfterSeconds: 60 });
  });
});

describe('the edges of the outage fallback', () => {
  afterEach(async () => {
    jest.restoreAllMocks();
    await redisBack();
  });

  it('answers at once while Redis is away, also over a connection that would queue commands until it is back', async () => {
    const proxied = new URL(REDIS_URL.toString());
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const queueing = createRedis(proxied.toString(), 'worker');
    try {
      await whenReady(queueing, 5000);
      const limiter = sharedLimiter(queueing, { keyPrefix: unique('queueing'), points: 8, durationSeconds: 60 });
      await redisAway();
      await waitFor(() => queueing.status !== 'ready', { what: 'the queueing client to notice Redis is away' });
      const answer = await Promise.race([outcome(limiter, 'k'), sleep(2000).then(() => 'no answer')]);
      expect(answer).toEqual({ over: false, remaining: 1 });
    } finally {
      queueing.disconnect();
    }
  });

  it('ends an outage count at the end of its window, to the millisecond', async () => {
    const keyPrefix = unique('owed-edge');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 8, durationSeconds: 60 });
    const start = Date.now();
    await redisAway();
    jest.spyOn(Date, 'now').mockReturnValue(start);
    await limiter.consume('a');
    jest.restoreAllMocks();
    await redisBack();
    jest.spyOn(Date, 'now').mockReturnValue(start + 60_000);
    expect(await outcome(limiter, 'a')).toEqual({ over: false, remaining: 7 });
  });

  it('keeps the outage counts of the last 100,000 keys', async () => {
    const keyPrefix = unique('owed-many');
    const limiter = sharedLimiter(viaProxy, { keyPrefix, points: 8, durationSeconds: 60 });
    await redisAway();
    for (let i = 0; i <= 100_000; i++) await limiter.consume(`k${i}`);
    await redisBack();
    // 100,001 keys owed: the first is forgotten, the second is not.
    expect(await outcome(limiter, 'k0')).toEqual({ over: false, remaining: 7 });
    expect(await outcome(limiter, 'k1')).toEqual({ over: false, remaining: 6 });
  }, 60_000);

  it('keeps one limiter per scope and limit, with its outage window', async () => {
    const limits = new PlanRateLimits(viaProxy, unique('plan-outage'));
    const check = { scope: 'api-token', key: 1, perMinute: 4 };
    await redisAway();
    expect(await limits.take([check])).toMatchObject({ over: false, limit: 4, remaining: 0 });
    expect(await limits.take([check])).toMatchObject({ over: true, limit: 4 });
  });
});

describe('per-plan limits, on a tie', () => {
  it('report the first of the checks closest to their end', async () => {
    const limits = new PlanRateLimits(redis, unique('plan'));
    const token = { scope: 'api-token', key: 1, perMinute: 3 };
    const team = { scope: 'api-team', key: 1, perMinute: 4 };
    await limits.take([team]);
    expect(await limits.take([token, team])).toMatchObject({ over: false, limit: 3, remaining: 2 });
    expect(await limits.take([team, token])).toMatchObject({ over: false, limit: 4, remaining: 1 });
  });
});
