/**
 * An in-process read cache that is only trusted while its invalidation feed is live.
 * Writers publish what they changed (see invalidation.ts); every process drops those
 * entries on receipt. While the feed is down the cache answers nothing, so a process that
 * cannot hear about changes never serves a stale value. Entries also expire after a TTL.
 *
 * A cache of lookups by a key that comes from outside (a smart-link key, a feed token) also
 * remembers misses, stored as `false`. Misses are kept apart, with a budget of their own: a
 * flood of made-up keys then evicts only other misses, never the entries real traffic
 * needs. When a store is full its oldest entry makes room. A cache of values of very
 * different sizes (feeds) also has a budget in bytes (`weigh` says what an entry costs).
 */
interface Entry<V> {
  value: V;
  expiresAt: number;
  weight: number;
}

interface LiveCacheOptions<V> {
  ttlMs: number;
  max: number;
  maxMisses?: number;
  /** With maxWeight: what one value costs (bytes); the oldest entries go until the rest fit. */
  weigh?: (value: V) => number;
  maxWeight?: number;
}

export class LiveCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly misses = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, { generation: number; value: Promise<V> }>();
  private live = false;
  private weight = 0;
  /** Bumped by every invalidation: a lookup that started before one is not cached. */
  private generation = 0;
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly maxMisses: number;
  private readonly weigh: (value: V) => number;
  private readonly maxWeight: number;

  constructor(options: LiveCacheOptions<V>) {
    this.ttlMs = options.ttlMs;
    this.max = options.max;
    this.maxMisses = options.maxMisses ?? Math.max(1, Math.floor(options.max / 4));
    this.weigh = options.weigh ?? (() => 0);
    this.maxWeight = options.maxWeight ?? Infinity;
  }

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
      this.remove(store, key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, startedAt: number): void {
    if (!this.live || startedAt !== this.generation) return;
    const miss = (value as unknown) === false;
    const store = miss ? this.misses : this.entries;
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return;
    // A key stored again moves to the back; a full store drops its oldest entries.
    this.remove(this.entries, key);
    this.remove(this.misses, key);
    while (store.size && (store.size >= (miss ? this.maxMisses : this.max) || this.weight + weight > this.maxWeight)) {
      this.remove(store, store.keys().next().value as string);
    }
    store.set(key, { value, expiresAt: Date.now() + this.ttlMs, weight });
    this.weight += weight;
  }

  /**
   * The cached value, or the one `load` reads. Requests for a key while it is being read
   * share that one read, unless an invalidation came in meanwhile (they read it afresh).
   */
  async load(key: string, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const pending = this.loading.get(key);
    if (pending && pending.generation === generation) return pending.value;
    const value = load();
    this.loading.set(key, { generation, value });
    try {
      const loaded = await value;
      this.set(key, loaded, generation);
      return loaded;
    } finally {
      if (this.loading.get(key)?.value === value) this.loading.delete(key);
    }
  }

  delete(key: string): void {
    this.generation++;
    this.remove(this.entries, key);
    this.remove(this.misses, key);
  }

  deleteWhere(match: (value: V) => boolean): void {
    this.generation++;
    for (const store of [this.entries, this.misses]) for (const [key, { value }] of store) if (match(value)) this.remove(store, key);
  }

  setLive(live: boolean): void {
    this.generation++;
    this.entries.clear();
    this.misses.clear();
    this.weight = 0;
    this.live = live;
  }

  get isLive(): boolean {
    return this.live;
  }

  private remove(store: Map<string, Entry<V>>, key: string): void {
    const entry = store.get(key);
    if (!entry) return;
    store.delete(key);
    this.weight -= entry.weight;
  }
}
