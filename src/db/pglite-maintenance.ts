/**
 * What PostgreSQL's autovacuum does, for the embedded engine, which has none: PGlite runs
 * PostgreSQL in single-user mode, so no table was ever analysed or vacuumed. Two things went
 * wrong without it (docs/RELIABILITY.md, "Load"):
 * - A prepared statement keeps the plan it got when its tables were nearly empty (no ANALYZE,
 *   so nothing invalidates it): the alert engine's read of a batch's observations by id, planned
 *   on a nearly empty price_observations, joined the ids to a scan of the whole table: 40 ms per
 *   ingestion after a minute, 190 ms after three, until the one engine was saturated at 30
 *   requests/s. ANALYZE invalidates a table's cached plans; the next run plans with real sizes.
 * - Dead rows of updated tables (listings, webhook endpoints, alert states) were never reclaimed.
 *
 * Every round (the `embedded-maintenance` task, src/jobs/tasks.ts) asks the engine's own
 * statistics which tables crossed autovacuum's default thresholds and runs VACUUM (ANALYZE) or
 * ANALYZE on those, one table per statement and each as a bulk query (when the engine is
 * otherwise idle, or after a short wait), so requests keep their turns between them.
 */

/** How often the task looks at the statistics; a round that finds nothing costs two small queries. */
export const MAINTENANCE_INTERVAL_MS = 10_000;

// autovacuum's defaults: vacuum at 50 dead rows + 20 %, or 1000 inserted + 20 % (so insert-only
// tables get their visibility map); analyze at 50 changed rows + 10 %.
const DUE_SQL = `/* tablesDueForVacuum */
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

interface Engine {
  bulkQuery<T>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[] }>;
}

/**
 * One round: what is due, then each table in turn (`onDone` after each; the round ends early,
 * between tables, once `signal` aborts).
 */
export async function maintain(
  engine: Engine,
  opts: { onDone?: (done: MaintenanceDone) => void; signal?: AbortSignal } = {},
): Promise<MaintenanceDone[]> {
  // The engine publishes its counts at most once a second; this round should see the latest.
  await engine.bulkQuery('/* flushTableStats */ select pg_stat_force_next_flush()');
  const due = await engine.bulkQuery<{ name: string; vacuum: boolean }>(DUE_SQL);
  const done: MaintenanceDone[] = [];
  for (const t of due.rows) {
    if (opts.signal?.aborted) break;
    const t0 = performance.now();
    // VACUUM (ANALYZE) does both in one pass over the table.
    await engine.bulkQuery(
      t.vacuum ? `/* vacuumTable */ vacuum (analyze) ${t.name}` : `/* analyzeTable */ analyze ${t.name}`,
    );
    const d = { table: t.name, vacuum: t.vacuum, ms: Math.round(performance.now() - t0) };
    done.push(d);
    opts.onDone?.(d);
  }
  return done;
}
