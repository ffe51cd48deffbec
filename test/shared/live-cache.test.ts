import { LiveCache } from '../../shared/cache/live-cache';

describe('LiveCache', () => {
  it('caches nothing while its invalidation feed is down', () => {
    const cache = new LiveCache<number>(10_000, 100);
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBeUndefined();
    cache.setLive(true);
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBe(1);
    cache.setLive(false);
    expect(cache.get('a')).toBeUndefined();
  });

  it('never caches a read that started before an invalidation', () => {
    const cache = new LiveCache<number>(10_000, 100);
    cache.setLive(true);
    const started = cache.begin();
    cache.delete('a'); // a change lands while the read is in flight
    cache.set('a', 1, started);
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops matching entries only', () => {
    const cache = new LiveCache<{ user: number }>(10_000, 100);
    cache.setLive(true);
    cache.set('a', { user: 1 }, cache.begin());
    cache.set('b', { user: 2 }, cache.begin());
    cache.deleteWhere((v) => v.user === 1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toEqual({ user: 2 });
  });

  it('expires entries after the TTL', () => {
    const cache = new LiveCache<number>(-1, 100);
    cache.setLive(true);
    cache.set('a', 1, cache.begin());
    expect(cache.get('a')).toBeUndefined();
  });
});
