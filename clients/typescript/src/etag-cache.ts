/**
 * Answers repeated GETs from a 304: the last 200 of each URL (per API key) is kept with its
 * ETag, sent back as If-None-Match, and served again when the service answers 304 Not Modified.
 * A 304 still counts toward the hourly limit but carries no body. Least recently used entries
 * go first once `maxEntries` is reached.
 */
export interface CachedAnswer {
  etag: string;
  body: ArrayBuffer;
  headers: [string, string][];
}

export class EtagCache {
  private readonly entries = new Map<string, CachedAnswer>();
  /** GETs answered from the cache after a 304. */
  hits = 0;

  constructor(readonly maxEntries = 500) {}

  get(key: string): CachedAnswer | undefined {
    const found = this.entries.get(key);
    if (found) {
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  set(key: string, answer: CachedAnswer): void {
    this.entries.delete(key);
    this.entries.set(key, answer);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
