/**
 * A bounded in-memory cache of computed results, least recently used first out, bounded both by
 * entries and by total weight (instrument rows). Entries belong to a generation (the reference
 * data version): when a newer generation shows up every older entry is dropped, and a request
 * still running on an older generation computes without caching. Concurrent requests for one key
 * share one computation.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; weight: number }>();
  private generation: string | undefined;
  private weight = 0;
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly limits: { entries: number; weight: number },
    private readonly weigh: (value: V) => number,
  ) {}

  async get(generation: string, key: string, compute: () => Promise<V>): Promise<V> {
    if (this.generation === undefined || generation > this.generation) {
      this.clear();
      this.generation = generation;
    } else if (generation !== this.generation) {
      this.misses++;
      return compute();
    }
    const found = this.entries.get(key);
    if (found) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, found);
      return found.value;
    }
    this.misses++;
    const entry = { value: compute(), weight: 0 };
    this.entries.set(key, entry);
    try {
      const value = await entry.value;
      if (this.entries.get(key) === entry) {
        // Now the most recently used: a computation that used other entries (and so refreshed
        // them) while it ran is not the first to go.
        this.entries.delete(key);
        this.entries.set(key, entry);
        entry.weight = this.weigh(value);
        this.weight += entry.weight;
        this.evict();
      }
      return value;
    } catch (error) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
  }

  stats() {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, weight: this.weight, generation: this.generation };
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.weight <= this.limits.weight) return;
      this.entries.delete(key);
      this.weight -= entry.weight;
    }
  }

  private clear(): void {
    this.entries.clear();
    this.weight = 0;
  }
}
