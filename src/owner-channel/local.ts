import { createKey, listKeys, revokeKey } from '../auth/service.js';
import { migrate } from '../db/migrate.js';
import type { Database } from '../db/types.js';
import { rollupPrices } from '../prices/service.js';
import { type ApiInjector, type CreatedKeyView, type OwnerOperations, toKeyView } from './operations.js';

/**
 * The operations on a database opened by this process: the CLI's when no server owns DATA_DIR
 * (or with DATABASE_URL), and the owning server's behind its channel (./server.ts).
 * `onRevoked` lets the server evict a revoked key from its own cache at once (other processes
 * hear the NOTIFY that revokeKey sends). `close` closes the database only when `ownsDb` is set
 * (the CLI's case). `inject` carries out `api` requests (the HTTP app of this process); `beforeClose`
 * runs before the database is closed (to close that app).
 */
export function localOperations(
  db: Database,
  opts: {
    onRevoked?: (keyId: string) => void;
    ownsDb?: boolean;
    inject?: ApiInjector;
    beforeClose?: () => Promise<void>;
  } = {},
): OwnerOperations {
  return {
    via: { kind: 'direct' },
    async createKey(input): Promise<CreatedKeyView> {
      const k = await createKey(db, {
        plan: input.plan,
        scope: input.scope ?? 'full',
        name: input.name ?? null,
        accountId: input.accountId ?? null,
      });
      return { ...toKeyView(k), key: k.key };
    },
    async listKeys(accountId) {
      return (await listKeys(db, accountId)).map(toKeyView);
    },
    async revokeKey(id) {
      const k = await revokeKey(db, id);
      if (k) opts.onRevoked?.(k.id);
      return k ? toKeyView(k) : undefined;
    },
    // Well inside the owner channel's 120 s request timeout; the CLI calls again with `next`.
    rollupPrices: (input) =>
      rollupPrices(db, { olderThanDays: input.olderThanDays, after: input.after ?? undefined, budgetMs: 20_000 }),
    migrate: () => migrate(db),
    async api(request) {
      if (!opts.inject) throw new Error('this process serves no HTTP API');
      return opts.inject(request);
    },
    async close() {
      await opts.beforeClose?.();
      if (opts.ownsDb) await db.close();
    },
  };
}
