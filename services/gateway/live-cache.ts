/**
 * An in-process read cache that is only trusted while its invalidation feed is live.
 * Writers publish what they changed (see invalidation.ts); every process drops those
 * entries on receipt. While the feed is down the cache answers nothing, so a process that
 * cannot hear about changes never serves a stale value. Entries also expire after a TTL.
 *
 * A cache of lookups by a key that comes from outside (a smart-link key, a feed token) also
 * remembers misses, stored as `false`. Misses are kept apart, with a budget of their own: a
 * flood of made-up keys then evicts only other misses, never the entries real traffic
 * needs. When a store is full its oldest entry makes room.
 */
export class LiveCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly misses = new Map<string, { value: V; expiresAt: number }>();
  private live = false;
  /** Bumped by every invalidation: a lookup that started before one is not cached. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly maxMisses = Math.max(1, Math.floor(max / 4)),
  ) {}

  /** Call before reading the source; pass the answer to set(). */
  begin(): number {
    return this.generation;
  }

  get(key: string): V | undefined {
    if (!this.live) return undefined;
    const found = this.entries.get(key);
    const store = found ? this.entries : this.misses;
    const hit = found ?? this.misses.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt < Date.now()) {
      store.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, startedAt: number): void {
    if (!this.live || startedAt !== this.generation) return;
    const miss = (value as unknown) === false;
    const store = miss ? this.misses : this.entries;
    // A key stored again moves to the back; a full store drops its oldest entry.
    store.delete(key);
    if (store.size >= (miss ? this.maxMisses : this.max)) store.delete(store.keys().next().value as string);
    (miss ? this.entries : this.misses).delete(key);
    store.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.misses.delete(key);
  }

  deleteWhere(match: (value: V) => boolean): void {
    this.generation++;
    for (const store of [this.entries, this.misses]) for (const [key, { value }] of store) if (match(value)) store.delete(key);
  }

  setLive(live: boolean): void {
    this.generation++;
    this.entries.clear();
    this.misses.clear();
    this.live = live;
  }

  get isLive(): boolean {
    return this.live;
  }
}
