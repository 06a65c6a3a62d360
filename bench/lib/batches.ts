import type { Database, Queryable } from '../../src/db/types.js';

/**
 * Runs `each` on every batch of `size` ids, a transaction a batch, in `jobs` connections at once:
 * `db` and `jobs - 1` more from `open`, closed at the end (the embedded engine has one
 * connection: jobs 1). A data set's bulk builds (the seed's day rows, bench:prices' blocks and
 * month texts) take 1-10 minutes at 50 M observations in one connection; two use both cores.
 * `done` hears each batch's end with the count done so far (for progress).
 */
export async function inBatches(
  db: Database,
  open: () => Promise<Database>,
  ids: readonly string[],
  opts: { size: number; jobs: number; done?: (done: number, count: number) => void },
  each: (tx: Queryable, batch: readonly string[]) => Promise<void>,
): Promise<number> {
  const count = Math.ceil(ids.length / opts.size);
  let next = 0;
  let done = 0;
  const work = async (conn: Database) => {
    for (let i = next++; i < count; i = next++) {
      await conn.transaction((tx) => each(tx, ids.slice(i * opts.size, (i + 1) * opts.size)));
      opts.done?.(++done, count);
    }
  };
  const extra = await Promise.all(Array.from({ length: Math.max(0, opts.jobs - 1) }, open));
  try {
    await Promise.all([db, ...extra].map(work));
  } finally {
    await Promise.all(extra.map((c) => c.close()));
  }
  return count;
}
