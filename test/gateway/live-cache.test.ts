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
