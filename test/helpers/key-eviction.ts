import type { KeyResolver } from '../../src/auth/key-cache.js';

/**
 * Resolves when `cache` evicts `keyId`. On PostgreSQL every process hears every revocation on
 * its database, and other test files revoke their own keys there at the same time: waiting for
 * the first 'evicted' would take theirs for ours.
 */
export function evictionOf(cache: KeyResolver, keyId: string): Promise<string> {
  return new Promise((resolve) => {
    const onEvicted = (evicted: string) => {
      if (evicted !== keyId) return;
      cache.off('evicted', onEvicted);
      resolve(evicted);
    };
    cache.on('evicted', onEvicted);
  });
}
