import { LiveCache } from '../../services/gateway/live-cache';

describe('LiveCache', () => {
  it('caches nothing while its invalidation feed is down', () => {
    const cache = new LiveCache<number>({ ttlMs: 10_000, max: 100 });
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBeUndefined();
    cache.setLive(true);
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBe(1);
    cache.setLive(false);
    expect(cache.get('a')).toBeUndefined();
  });

  it('never caches a read that started before an invalidation', () => {
    const cache = new LiveCache<number>({ ttlMs: 10_000, max: 100 });
    cache.setLive(true);
    const started = cache.begin();
    cache.delete('a'); // a change lands while the read is in flight
    cache.set('a', 1, started);
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops matching entries only', () => {
    const cache = new LiveCache<{ user: number }>({ ttlMs: 10_000, max: 100 });
    cache.setLive(true);
    cache.set('a', { user: 1 }, cache.begin());
    cache.set('b', { user: 2 }, cache.begin());
    cache.deleteWhere((v) => v.user === 1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toEqual({ user: 2 });
  });

  it('expires entries after the TTL', () => {
    const cache = new LiveCache<number>({ ttlMs: -1, max: 100 });
    cache.setLive(true);
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('LiveCache when full', () => {
  it('makes room by dropping its oldest entry, not everything', () => {
    const cache = new LiveCache<number>({ ttlMs: 10_000, max: 3 });
    cache.setLive(true);
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) cache.set(key, i, cache.begin());
    expect(['a', 'b', 'c', 'd'].map((k) => cache.get(k))).toEqual([undefined, 1, 2, 3]);
  });

  it('keeps misses apart: a flood of unknown keys never pushes out a known one', () => {
    const cache = new LiveCache<{ id: number } | false>({ ttlMs: 10_000, max: 100, maxMisses: 10 });
    cache.setLive(true);
    cache.set('known', { id: 1 }, cache.begin());
    for (let i = 0; i < 10_000; i++) cache.set(`made-up-${i}`, false, cache.begin());
    expect(cache.get('known')).toEqual({ id: 1 });
    // The latest misses are still remembered, within their own budget.
    expect(cache.get('made-up-9999')).toBe(false);
    expect(cache.get('made-up-0')).toBeUndefined();
  });

  it('a key that turns from a miss into a hit is one entry, wherever it was', () => {
    const cache = new LiveCache<number | false>({ ttlMs: 10_000, max: 100 });
    cache.setLive(true);
    cache.set('k', false, cache.begin());
    cache.set('k', 7, cache.begin());
    expect(cache.get('k')).toBe(7);
    cache.set('k', false, cache.begin());
    expect(cache.get('k')).toBe(false);
    cache.delete('k');
    expect(cache.get('k')).toBeUndefined();
  });
});

describe('LiveCache with a budget in bytes', () => {
  const sized = () => new LiveCache<string>({ ttlMs: 10_000, max: 100, weigh: (v) => v.length, maxWeight: 10 });

  it('drops the oldest entries until a new one fits, and never keeps one larger than the budget', () => {
    const cache = sized();
    cache.setLive(true);
    cache.set('a', 'xxxx', cache.begin());
    cache.set('b', 'xxxx', cache.begin());
    cache.set('c', 'xxxx', cache.begin());
    expect(['a', 'b', 'c'].map((k) => cache.get(k))).toEqual([undefined, 'xxxx', 'xxxx']);
    cache.set('huge', 'x'.repeat(11), cache.begin());
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('c')).toBe('xxxx');
  });

  it('gives back the bytes of what it drops: an invalidated entry makes room', () => {
    const cache = sized();
    cache.setLive(true);
    cache.set('a', 'x'.repeat(6), cache.begin());
    cache.delete('a');
    cache.set('b', 'x'.repeat(6), cache.begin());
    cache.set('c', 'xxxx', cache.begin());
    expect([cache.get('b'), cache.get('c')]).toEqual(['x'.repeat(6), 'xxxx']);
  });
});

describe('LiveCache.load', () => {
  it('shares one read among callers that come while it runs, and caches its answer', async () => {
    const cache = new LiveCache<number>({ ttlMs: 10_000, max: 10 });
    cache.setLive(true);
    let reads = 0;
    let finish!: (v: number) => void;
    const read = () => {
      reads++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const both = Promise.all([cache.load('k', read), cache.load('k', read)]);
    finish(42);
    expect(await both).toEqual([42, 42]);
    expect(await cache.load('k', read)).toBe(42);
    expect(reads).toBe(1);
  });

  it('reads afresh for a caller that comes after an invalidation, and caches neither stale answer', async () => {
    const cache = new LiveCache<number>({ ttlMs: 10_000, max: 10 });
    cache.setLive(true);
    const finishes: Array<(v: number) => void> = [];
    const read = () => new Promise<number>((resolve) => finishes.push(resolve));
    const before = cache.load('k', read);
    cache.delete('k');
    const after = cache.load('k', read);
    expect(finishes).toHaveLength(2);
    finishes[0](1);
    finishes[1](2);
    expect([await before, await after]).toEqual([1, 2]);
    expect(cache.get('k')).toBe(2);
  });
});
