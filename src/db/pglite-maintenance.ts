/**
 * What PostgreSQL's autovacuum does, for the embedded engine, which has none: PGlite runs
 * PostgreSQL in single-user mode, so no table was ever analysed or vacuumed. Two things went
 * wrong without it (docs/RELIABILITY.md, "Load"):
 * - A prepared statement keeps the plan it got when its tables were nearly empty (no ANALYZE,
 *   so nothing invalidates it): the alert engine's "previous observation" lookup planned on an
 *   empty price_observations read every row of every series it touched, 40 ms per ingestion
 *   after a minute and 190 ms after three, until the one engine was saturated at 30 requests/s.
 *   ANALYZE invalidates a table's cached plans; the next execution plans with real sizes.
 * - Dead rows of updated tables (listings, webhook endpoints, alert states) were never reclaimed.
 *
 * Every round (MAINTENANCE_INTERVAL_MS) asks the engine's own statistics which tables crossed
 * autovacuum's default thresholds and runs VACUUM / ANALYZE on those, one table per statement
 * and each as a bulk query (when the engine is otherwise idle, or after a short wait), so
 * requests keep their turns between them.
 */

/** How often the statistics are looked at; a round that finds nothing costs one small query. */
export const MAINTENANCE_INTERVAL_MS = 10_000;

// autovacuum's defaults: vacuum at 50 dead rows + 20 %, or 1000 inserted + 20 % (so insert-only
// tables get their visibility map); analyze at 50 changed rows + 10 %.
const DUE_SQL = `
select format('%I.%I', schemaname, relname) as name,
       (n_dead_tup > 50 + 0.2 * n_live_tup or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup) as vacuum
  from pg_stat_user_tables
 where n_dead_tup > 50 + 0.2 * n_live_tup
    or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup
    or n_mod_since_analyze > 50 + 0.1 * n_live_tup
 order by relname`;

export interface MaintenanceDone {
  table: string;
  /** Vacuumed and analysed; otherwise analysed only. */
  vacuum: boolean;
  ms: number;
}

export interface MaintenanceHooks {
  /** Each table vacuumed or analysed (logged at debug level by the runtime). */
  onDone?: (done: MaintenanceDone) => void;
  /** A round that failed (a read-only DATA_DIR, a closing engine); the next round tries again. */
  onError?: (err: Error) => void;
}

interface Engine {
  bulkQuery<T>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[] }>;
}

/** One round: what is due, then each table in turn. */
export async function maintain(engine: Engine, hooks: MaintenanceHooks = {}): Promise<MaintenanceDone[]> {
  // The engine publishes its counts at most once a second; this round should see the latest.
  await engine.bulkQuery('select pg_stat_force_next_flush()');
  const due = await engine.bulkQuery<{ name: string; vacuum: boolean }>(DUE_SQL);
  const done: MaintenanceDone[] = [];
  for (const t of due.rows) {
    const t0 = performance.now();
    // VACUUM (ANALYZE) does both in one pass over the table.
    await engine.bulkQuery(t.vacuum ? `vacuum (analyze) ${t.name}` : `analyze ${t.name}`);
    const d = { table: t.name, vacuum: t.vacuum, ms: Math.round(performance.now() - t0) };
    done.push(d);
    hooks.onDone?.(d);
  }
  return done;
}

/** Runs `maintain` every `intervalMs` until the returned stop is called (which waits for a round under way). */
export function startMaintenance(engine: Engine, hooks: MaintenanceHooks = {}, intervalMs = MAINTENANCE_INTERVAL_MS): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return; // a slow round is not stacked behind itself
    running = maintain(engine, hooks)
      .catch((err: unknown) => hooks.onError?.(err instanceof Error ? err : new Error(String(err))))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
