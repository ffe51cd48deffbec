/**
 * An in-process read cache that is only trusted while its invalidation feed is live.
 * Writers publish what they changed (see invalidation.ts); every process drops those
 * entries on receipt. While the feed is down the cache answers nothing, so a process that
 * cannot hear about changes never serves a stale value. Entries also expire after a TTL.
 */
export class LiveCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private live = false;
  /** Bumped by every invalidation: a lookup that started before one is not cached. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  /** Call before reading the source; pass the answer to set(). */
  begin(): number {
    return this.generation;
  }

  get(key: string): V | undefined {
    if (!this.live) return undefined;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, startedAt: number): void {
    if (!this.live || startedAt !== this.generation) return;
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  deleteWhere(match: (value: V) => boolean): void {
    this.generation++;
    for (const [key, { value }] of this.entries) if (match(value)) this.entries.delete(key);
  }

  setLive(live: boolean): void {
    this.generation++;
    this.entries.clear();
    this.live = live;
  }

  get isLive(): boolean {
    return this.live;
  }
}
