import { EventEmitter } from 'node:events';
import type { Database } from '../db/types.js';
import { findActiveKey, hashKey, KEY_REVOKED_CHANNEL, type Principal } from './keys.js';

interface Events {
  /** A key was dropped from the cache because its revocation was announced. */
  evicted: [keyId: string];
  /** The whole cache was dropped (the notification channel was lost). */
  cleared: [];
}

/**
 * Resolves API keys to principals with a short in-process cache, so an authenticated request
 * costs no extra query. The cache is looked up by the key as sent, so a cached request costs no
 * sha256 either (issue 26); only a lookup in the database hashes it, since the hash is what the
 * database stores. The keys live in this process's memory for the TTL, as they do anyway in the
 * requests that carry them. Revocations are announced with NOTIFY (src/auth/keys.ts) and evict the
 * entry at once in every process; the TTL bounds staleness if the notification channel is down,
 * and the whole cache is dropped whenever that channel is lost.
 *
 * A lookup that was in flight while an eviction arrived is not cached: its row may predate the
 * revocation, and caching it would let the revoked key through until the TTL ran out.
 */
export class KeyResolver extends EventEmitter<Events> {
  private readonly cache = new Map<string, { principal: Principal; expires: number }>();
  /** Bumped by every eviction; a lookup caches its result only if this did not move meanwhile. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {
    super();
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(
      KEY_REVOKED_CHANNEL,
      (keyId) => this.evict(keyId),
      () => this.clear(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }

  private fresh(key: string, now: number): Principal | undefined {
    const hit = this.cache.get(key);
    return hit && hit.expires > now ? hit.principal : undefined;
  }

  /** The key's principal if it is cached and fresh (no query); undefined otherwise. */
  cached(key: string): Principal | undefined {
    return this.fresh(key, Date.now());
  }

  async resolve(key: string): Promise<Principal | undefined> {
    const now = Date.now();
    const hit = this.fresh(key, now);
    if (hit) return hit;
    const generation = this.generation;
    const principal = await findActiveKey(this.db, hashKey(key));
    if (principal && this.ttlMs > 0 && generation === this.generation) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(key, { principal, expires: now + this.ttlMs });
    } else {
      this.cache.delete(key);
    }
    return principal;
  }

  evict(keyId: string): void {
    this.generation++;
    for (const [key, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(key);
    this.emit('evicted', keyId);
  }

  clear(): void {
    this.generation++;
    this.cache.clear();
    this.emit('cleared');
  }
}
