import type { Logger } from 'pino';
import type { Database, Queryable } from '../db/types.js';
import type { Clock } from '../time.js';
import { DAY_MS } from '../time.js';

/**
 * Passes over every product for the caches of aggregates the background tasks build (the trends'
 * blocks of whole days, migrations/0022; the local days of HISTORY_ZONES, migrations/0024): each
 * cache has a build function of a few products that is idempotent, takes its locks itself and
 * builds only what has ended by `before`. A pass runs it over every product by id, a batch per
 * short transaction, so a pass holds no long transaction and an interrupted one loses at most a
 * batch.
 */

/** Builds the products' missing rows that ended by `before` (from `since` on, all of them without); returns the rows written. */
export type ProductsBuild = (
  tx: Queryable,
  productIds: readonly string[],
  before: Date,
  since?: Date,
) => Promise<number>;

export interface ProductsPass {
  products: number;
  rows: number;
}

const PRODUCTS = `/* passProducts */ select id from products where id > $1 order by id limit $2`;

/** One pass over every product, `batch` per transaction; `stop` is checked between batches. */
export async function passOverProducts(
  db: Database,
  build: ProductsBuild,
  opts: { before: Date; since?: Date; batch: number; stop?: () => boolean },
): Promise<ProductsPass> {
  const out: ProductsPass = { products: 0, rows: 0 };
  let after = '';
  for (;;) {
    if (opts.stop?.()) return out;
    const ids = (await db.query<{ id: string }>(PRODUCTS, [after, opts.batch])).rows.map((r) => r.id);
    if (ids.length === 0) return out;
    out.rows += await db.transaction((tx) => build(tx, ids, opts.before, opts.since));
    out.products += ids.length;
    after = ids[ids.length - 1]!;
  }
}

/** A pass over the whole history (rows the roll-up or older late data dropped) is due this long after the last one finished. */
export const FULL_PASS_EVERY_MS = 7 * DAY_MS;

interface PassState {
  cursor: string | null;
  done_at: Date | string | null;
}

const due = (s: PassState | undefined, now: number) =>
  !s || s.cursor !== null || s.done_at === null || new Date(s.done_at).getTime() <= now - FULL_PASS_EVERY_MS;

/** Whether the pass named `task` in task_passes (migrations/0023) is due or in progress. */
export async function fullPassDue(db: Database, task: string, now: number): Promise<boolean> {
  const r = await db.query<PassState>(`/* passState */ select cursor, done_at from task_passes where task = $1`, [
    task,
  ]);
  return due(r.rows[0], now);
}

/**
 * The pass over the whole history, batch by batch from task_passes' cursor: each batch's
 * transaction holds the pass's row, builds the products after the cursor and moves it on, so
 * processes share the pass and one that dies loses nothing done. Ends when the pass is done (by
 * this process or another one) or `stop` says so between batches.
 */
export async function fullPass(
  db: Database,
  task: string,
  build: ProductsBuild,
  now: number,
  batch: number,
  stop: () => boolean,
  analyze?: PassAnalyze,
): Promise<{ products: number; rows: number; done: boolean }> {
  const out = { products: 0, rows: 0, done: false };
  await db.query(`/* passRow */ insert into task_passes (task) values ($1) on conflict (task) do nothing`, [task]);
  while (!out.done && !stop())
    await db.transaction(async (tx) => {
      const state = (
        await tx.query<PassState>(`/* passLock */ select cursor, done_at from task_passes where task = $1 for update`, [
          task,
        ])
      ).rows[0];
      if (!due(state, now)) return void (out.done = true);
      const ids = (await tx.query<{ id: string }>(PRODUCTS, [state?.cursor ?? '', batch])).rows.map((r) => r.id);
      if (ids.length > 0) {
        out.rows += await build(tx, ids, new Date(now));
        out.products += ids.length;
      } else out.done = true;
      await tx.query(
        `/* passMove */ update task_passes set cursor = $2, done_at = coalesce($3, done_at) where task = $1`,
        [task, ids.at(-1) ?? null, out.done ? new Date(now).toISOString() : null],
      );
    });
  // A first pass on a database with history fills the cache's month partitions at once, while
  // autovacuum may be busy with the large tables: planned from an empty partition's statistics,
  // the reads went through the account's index (50.5 M observations, blocks: 51-97 ms of
  // PostgreSQL a trends request, 10-12 after ANALYZE; docs/BENCHMARKS.md). Seconds, at most weekly.
  if (analyze && out.rows >= analyze.afterRows) await db.query(`/* passAnalyze */ analyze ${analyze.table}`);
  return out;
}

/** A cache's table, analyzed after a pass that wrote at least `afterRows` rows (a few hundred products' year). */
export interface PassAnalyze {
  table: string;
  afterRows: number;
}
export const ANALYZE_AFTER_ROWS = 20_000;

/**
 * A periodic build of a cache (a task of src/jobs/tasks.ts): the pass over the whole history
 * when one is due (a week after the last one finished, by task_passes: not on every process
 * start) or in progress (resumed from its cursor after a restart), else a pass over the last
 * `recentMs` (what ended since the last run, and what late data dropped). Any number of
 * processes may run it (a row is built by one statement; a second one finds it built). An
 * aborted `signal` ends the run after the batch in progress.
 */
export function cacheRun(
  db: Database,
  log: Logger,
  clock: Clock,
  c: { component: string; task: string; build: ProductsBuild; batch: number; recentMs: number; analyze?: PassAnalyze },
): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const now = clock.now();
    const stop = () => signal.aborted;
    if (await fullPassDue(db, c.task, now)) {
      const r = await fullPass(db, c.task, c.build, now, c.batch, stop, c.analyze);
      log.info({ component: c.component, ...r, since: null }, `${c.component} built`);
      return;
    }
    const since = new Date(now - c.recentMs);
    const r = await passOverProducts(db, c.build, { before: new Date(now), since, stop, batch: c.batch });
    log.info({ component: c.component, ...r, since: since.toISOString() }, `${c.component} built`);
  };
}
