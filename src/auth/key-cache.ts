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
 * costs no extra query. Revocations are announced with NOTIFY (src/auth/keys.ts) and evict the
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

  private fresh(hash: string, now: number): Principal | undefined {
    const hit = this.cache.get(hash);
    return hit && hit.expires > now ? hit.principal : undefined;
  }

  /** The key's principal if it is cached and fresh (no query); undefined otherwise. */
  cached(key: string): Principal | undefined {
    return this.fresh(hashKey(key), Date.now());
  }

  async resolve(key: string): Promise<Principal | undefined> {
    const hash = hashKey(key);
    const now = Date.now();
    const hit = this.fresh(hash, now);
    if (hit) return hit;
    const generation = this.generation;
    const principal = await findActiveKey(this.db, hash);
    if (principal && this.ttlMs > 0 && generation === this.generation) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(hash, { principal, expires: now + this.ttlMs });
    } else {
      this.cache.delete(hash);
    }
    return principal;
  }

  evict(keyId: string): void {
    this.generation++;
    for (const [hash, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(hash);
    this.emit('evicted', keyId);
  }

  clear(): void {
    this.generation++;
    this.cache.clear();
    this.emit('cleared');
  }
}
