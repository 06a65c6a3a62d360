import type { Database, Queryable } from './types.js';

/**
 * Range partitions by time, the one mechanism behind every partitioned table (docs/SCALING.md,
 * "Partitions"): price_observations by month of observed_at (migrations/0014), events and their
 * webhook deliveries by day of the event's created_at (migrations/0016).
 *
 * A partition set is one or more tables partitioned on the same ranges, created and dropped
 * together: `<table>_pYYYYMM` (months) or `<table>_pYYYYMMDD` (days) for [from, to) in UTC, and
 * `<table>_default` for whatever no range covers (a row from an unexpected time is never refused).
 * Tables are created in the order listed and dropped in the reverse one.
 */

export type PartitionUnit = 'day' | 'month';

export interface PartitionSet {
  /** For logs. */
  name: string;
  unit: PartitionUnit;
  /** Each table with the column it is partitioned on (the partition key). */
  tables: readonly { table: string; column: string }[];
  /** Ranges created ahead of the current one. */
  ahead: number;
  /** How far back (in units) rows of the default partition are given a range of their own. */
  back: number;
  /** Advisory lock taken by whoever creates, fills or drops the set's partitions. */
  lock: number;
}

export interface Range {
  /** Suffix of every table's partition: pYYYYMM or pYYYYMMDD. */
  suffix: string;
  /** Inclusive lower bound, UTC. */
  from: Date;
  /** Exclusive upper bound, UTC. */
  to: Date;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The range of `unit` holding `t`. */
export function rangeOf(unit: PartitionUnit, t: Date): Range {
  if (unit === 'month') {
    const from = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1));
    const to = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
    return { suffix: `p${from.getUTCFullYear()}${pad(from.getUTCMonth() + 1)}`, from, to };
  }
  const from = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
  const to = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1));
  return { suffix: `p${from.getUTCFullYear()}${pad(from.getUTCMonth() + 1)}${pad(from.getUTCDate())}`, from, to };
}

/** The range `n` units after the one holding `t`. */
export function rangeAfter(unit: PartitionUnit, t: Date, n: number): Range {
  return unit === 'month'
    ? rangeOf(unit, new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + n, 1)))
    : rangeOf(unit, new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + n)));
}

const SUFFIX = { month: /^p(\d{4})(\d{2})$/, day: /^p(\d{4})(\d{2})(\d{2})$/ } as const;

function rangeOfSuffix(unit: PartitionUnit, suffix: string): Range | undefined {
  const m = SUFFIX[unit].exec(suffix);
  if (!m) return undefined;
  return rangeOf(unit, new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, unit === 'day' ? Number(m[3]) : 1)));
}

export const partitionName = (table: string, r: Range) => `${table}_${r.suffix}`;
export const defaultPartition = (table: string) => `${table}_default`;

/** The ranges `table` has a partition for, oldest first. */
export async function listRanges(db: Queryable, unit: PartitionUnit, table: string): Promise<Range[]> {
  const r = await db.query<{ name: string }>(
    `/* listPartitions */
     select c.relname as name from pg_inherits i
       join pg_class c on c.oid = i.inhrelid
      where i.inhparent = $1::regclass and c.relname like $2
      order by c.relname`,
    [table, `${table}\\_p%`],
  );
  const out: Range[] = [];
  for (const row of r.rows) {
    const range = rangeOfSuffix(unit, row.name.slice(table.length + 1));
    if (range) out.push(range);
  }
  return out;
}

async function lockSet(tx: Queryable, set: PartitionSet): Promise<void> {
  await tx.query('/* lockPartitions */ select pg_advisory_xact_lock($1)', [set.lock]);
}

/** PostgreSQL's lock_not_available: a lock wait outlasted lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * How long partition maintenance waits for its tables before it gives way, rolls back and tries
 * again (LOCK_ATTEMPTS times, backing off; then the periodic task tries at its next turn).
 *
 * Creating, attaching, detaching and dropping a partition each take an ACCESS EXCLUSIVE lock on
 * the partitioned table, and a set changes several tables in one transaction. Taken one table
 * after the other, that deadlocked with a reader that had locked a later table of the set and
 * then asked for an earlier one (the trends read price_days, then price_observations: a 500 in
 * CI's mixed load on PostgreSQL). So every table of the set is locked up front, in one statement,
 * before any work, with a lock_timeout well under PostgreSQL's deadlock_timeout (1 s): a reader
 * caught between two of the tables waits at most this long, and the maintenance, never the
 * request, is the one that gives way. A waiting ACCESS EXCLUSIVE request also queues every new
 * reader of the table behind it, so the wait is kept short for that reason too.
 */
export const MAINTENANCE_LOCK_TIMEOUT_MS = 250;
const LOCK_ATTEMPTS = 8;

/** Sets lock_timeout to MAINTENANCE_LOCK_TIMEOUT_MS for the rest of `tx`. */
export async function shortLockWaits(tx: Queryable): Promise<void> {
  await tx.query(`/* maintenanceLockTimeout */ select set_config('lock_timeout', $1, true)`, [
    `${MAINTENANCE_LOCK_TIMEOUT_MS}ms`,
  ]);
}

/**
 * Runs `attempt` (a transaction that set shortLockWaits) again when a lock it waited for was not
 * granted in time: LOCK_ATTEMPTS times, backing off, then the error is thrown (the periodic task
 * tries at its next turn).
 */
export async function retryLockTimeouts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code !== LOCK_NOT_AVAILABLE || n >= LOCK_ATTEMPTS) throw err;
      const backoff = 50 * 2 ** (n - 1);
      await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
    }
  }
}

/**
 * Runs `fn` in a transaction holding the set's advisory lock and an ACCESS EXCLUSIVE lock on
 * every table of the set (each with its partitions, parent first, as readers and writers take
 * them); retried from the start when a table lock is not granted in time.
 */
async function withSetLocked<T>(db: Database, set: PartitionSet, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return retryLockTimeouts(() =>
    db.transaction(async (tx) => {
      await lockSet(tx, set);
      await shortLockWaits(tx);
      const tables = set.tables.map((t) => t.table).join(', ');
      await tx.query(`/* lockPartitionedTables */ lock table ${tables} in access exclusive mode`);
      return fn(tx);
    }),
  );
}

/** Whether the default partition of `table` holds rows in the range. */
async function defaultHolds(tx: Queryable, table: string, column: string, r: Range): Promise<boolean> {
  const q = await tx.query(
    `/* defaultHoldsRange */ select 1 from ${defaultPartition(table)} where ${column} >= $1 and ${column} < $2 limit 1`,
    [r.from.toISOString(), r.to.toISOString()],
  );
  return q.rows.length > 0;
}

/** The instants (start of each unit, UTC) the default partition of `table` holds rows of, within [from, to). */
async function unitsInDefault(
  db: Queryable,
  unit: PartitionUnit,
  table: string,
  column: string,
  from: Date,
  to: Date,
): Promise<Date[]> {
  const r = await db.query<{ m: Date }>(
    `/* unitsInDefault */
     select distinct date_trunc('${unit}', ${column}, 'UTC') as m from ${defaultPartition(table)}
      where ${column} >= $1 and ${column} < $2 order by 1`,
    [from.toISOString(), to.toISOString()],
  );
  return r.rows.map((row) => new Date(row.m));
}

const bounds = (r: Range) => `from ('${r.from.toISOString()}') to ('${r.to.toISOString()}')`;

/**
 * Creates `table`'s partition of the range. When the default partition holds rows of it, a table
 * of the same shape takes them (inserted into it directly, so the parent's triggers do not see
 * them as new rows) and is then attached; otherwise the partition is created empty. Returns the
 * rows moved.
 */
async function createPartition(tx: Queryable, table: string, column: string, r: Range): Promise<number> {
  const name = partitionName(table, r);
  // The caller holds every table of the set (withSetLocked), so writers wait until the range is
  // made (a moment: the rows of one range leave the default partition). Without it an INSERT
  // routed to the default partition before the attach fails once it commits ("violates
  // partition constraint", PostgreSQL re-checks the default's bound), and a row arriving between
  // the move and the attach would make the attach fail.
  if (!(await defaultHolds(tx, table, column, r))) {
    await tx.query(
      `/* createPartition */ create table if not exists ${name} partition of ${table} for values ${bounds(r)}`,
    );
    return 0;
  }
  await tx.query(
    `/* createPartitionTable */ create table ${name} (like ${table} including defaults including constraints)`,
  );
  const moved = await tx.query(
    `/* moveFromDefault */
     with gone as (delete from ${defaultPartition(table)} where ${column} >= $1 and ${column} < $2 returning *)
     insert into ${name} select * from gone`,
    [r.from.toISOString(), r.to.toISOString()],
  );
  await tx.query(`/* attachPartition */ alter table ${table} attach partition ${name} for values ${bounds(r)}`);
  return moved.rowCount;
}

export interface EnsureResult {
  /** Partitions created (table names). */
  created: string[];
  /** Rows moved out of default partitions into a range of their own. */
  moved: number;
}

/**
 * Creates the current range and the `set.ahead` after it for every table of the set when
 * missing, and a range for any range (within `set.back` units) whose rows sit in a default
 * partition. Each range in its own short transaction under the set's advisory lock, so any
 * number of processes can run it at once: the second finds the range made. Idempotent.
 */
export async function ensurePartitions(
  db: Database,
  set: PartitionSet,
  now = new Date(),
  ahead = set.ahead,
): Promise<EnsureResult> {
  const out: EnsureResult = { created: [], moved: 0 };
  const wanted = new Map<string, Range>();
  for (let i = 0; i <= ahead; i++) {
    const r = rangeAfter(set.unit, now, i);
    wanted.set(r.suffix, r);
  }
  const existing = new Map<string, Set<string>>();
  for (const { table, column } of set.tables) {
    existing.set(table, new Set((await listRanges(db, set.unit, table)).map((r) => r.suffix)));
    const from = rangeAfter(set.unit, now, -set.back).from;
    const to = rangeAfter(set.unit, now, ahead + 1).from;
    for (const t of await unitsInDefault(db, set.unit, table, column, from, to)) {
      const r = rangeOf(set.unit, t);
      wanted.set(r.suffix, r);
    }
  }
  for (const r of [...wanted.values()].sort((a, b) => a.from.getTime() - b.from.getTime())) {
    if (set.tables.every(({ table }) => existing.get(table)!.has(r.suffix))) continue;
    const made = await withSetLocked(db, set, async (tx) => {
      const names: string[] = [];
      let moved = 0;
      for (const { table, column } of set.tables) {
        if ((await listRanges(tx, set.unit, table)).some((p) => p.suffix === r.suffix)) continue;
        moved += await createPartition(tx, table, column, r);
        names.push(partitionName(table, r));
      }
      return { names, moved };
    });
    out.created.push(...made.names);
    out.moved += made.moved;
  }
  return out;
}

/**
 * Detaches and drops every partition of the set whose whole range ends at or before `cutoff`.
 *
 * Two steps per range, so that the live tables are locked for a moment whatever the range
 * holds. First one transaction holding the set (withSetLocked) runs `beforeDrop` (what the rows
 * take with them that no foreign key cascades) and detaches the range from every table of the
 * set, in reverse order: catalogue changes only, the range's rows leave the tables at its commit.
 * Then each detached table is dropped in a transaction of its own, which locks nothing a request
 * uses: the commit of a DROP unlinks the table's files, and that takes time in proportion to
 * their size (~0.3 s per GB on this project's VM, docs/BENCHMARKS.md), which was the whole of a
 * large month's drop while the set was held. A table left detached by a crash between the two
 * steps is dropped by the next run (`dropDetached`). `onDetached` is told each range as it leaves
 * the tables (the benchmark times it). Returns the suffixes of the ranges dropped.
 */
export async function dropRangesBefore(
  db: Database,
  set: PartitionSet,
  cutoff: Date,
  opts: {
    stop?: () => boolean;
    beforeDrop?: (tx: Queryable, r: Range) => Promise<void>;
    onDetached?: (r: Range) => void;
  } = {},
): Promise<string[]> {
  await dropDetached(db, set);
  const suffixes = new Map<string, Range>();
  for (const { table } of set.tables) {
    for (const r of await listRanges(db, set.unit, table))
      if (r.to.getTime() <= cutoff.getTime()) suffixes.set(r.suffix, r);
  }
  const dropped: string[] = [];
  for (const r of [...suffixes.values()].sort((a, b) => a.from.getTime() - b.from.getTime())) {
    if (opts.stop?.()) break;
    const detached = await withSetLocked(db, set, async (tx) => {
      await opts.beforeDrop?.(tx, r);
      const names: string[] = [];
      for (const { table } of [...set.tables].reverse()) {
        if (!(await listRanges(tx, set.unit, table)).some((p) => p.suffix === r.suffix)) continue;
        const name = partitionName(table, r);
        await tx.query(`/* detachPartition */ alter table ${table} detach partition ${name}`);
        names.push(name);
      }
      return names;
    });
    if (detached.length === 0) continue;
    opts.onDetached?.(r);
    for (const name of detached) await db.query(`/* dropPartition */ drop table if exists ${name}`);
    dropped.push(r.suffix);
  }
  return dropped;
}

/**
 * Drops the set's tables named as its partitions but attached to nothing: ranges a run detached
 * and did not get to drop (a crash or a deploy between its two steps). A partition being made is
 * attached in the transaction that creates it, so no other session ever sees it detached.
 */
async function dropDetached(db: Database, set: PartitionSet): Promise<void> {
  for (const { table } of set.tables) {
    for (const name of await detachedTables(db, table, `${table}\\_p%`)) {
      if (rangeOfSuffix(set.unit, name.slice(table.length + 1)) === undefined) continue;
      await db.query(`/* dropPartition */ drop table if exists ${name}`);
    }
  }
}

/** Plain tables (no partition of anything) beside `table` whose names are `like` the pattern. */
export async function detachedTables(db: Queryable, table: string, like: string): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `/* listDetachedPartitions */
     select c.relname as name from pg_class c
      where c.relnamespace = (select relnamespace from pg_class where oid = $1::regclass)
        and c.relkind = 'r' and not c.relispartition and c.relname like $2
      order by c.relname`,
    [table, like],
  );
  return r.rows.map((row) => row.name);
}

/**
 * ANALYZE of the set's partitioned tables whose statistics are missing or stale. Autovacuum
 * analyses each partition but never a partitioned table itself (PostgreSQL's documentation of
 * ANALYZE says to run it by hand), so the parents' own statistics, which the planner uses for
 * whatever it estimates over the whole table (joins to it, its row count), were never made. Stale
 * is autovacuum's rule applied to the partitions' row counts: their sum moved by more than
 * 50 rows + 10 % from the parent's count at its last ANALYZE. PostgreSQL 18 (the embedded engine)
 * samples the partitions without analysing each again (`ANALYZE ONLY`); PostgreSQL 15 has no
 * ONLY and analyses them too. One process at a time (a try-lock of its own, so creation and
 * retention, which take the set's lock, never wait behind it). Returns the tables analysed.
 */
export async function analyzeStaleParents(db: Database, set: PartitionSet): Promise<string[]> {
  return db.transaction(async (tx) => {
    const lock = await tx.query<{ ok: boolean }>(
      '/* analyzePartitionsLock */ select pg_try_advisory_xact_lock($1::int, 1) as ok',
      [set.lock],
    );
    if (!lock.rows[0]?.ok) return [];
    const version = await tx.query<{ v: number }>(
      `/* serverVersion */ select current_setting('server_version_num')::int as v`,
    );
    const only = Number(version.rows[0]!.v) >= 180_000 ? 'only ' : '';
    const analysed: string[] = [];
    for (const { table } of set.tables) {
      const r = await tx.query<{ parent: number; children: number }>(
        `/* partitionedTableRows */
         select p.reltuples::float8 as parent, coalesce(sum(greatest(c.reltuples, 0)), 0)::float8 as children
           from pg_class p
           left join pg_inherits i on i.inhparent = p.oid
           left join pg_class c on c.oid = i.inhrelid
          where p.oid = $1::regclass
          group by p.reltuples`,
        [table],
      );
      const parent = Number(r.rows[0]!.parent);
      const children = Number(r.rows[0]!.children);
      // -1: never analysed. Nothing to sample until a partition has been analysed itself.
      const stale = parent < 0 ? children > 0 : Math.abs(children - parent) > 50 + 0.1 * parent;
      if (!stale) continue;
      await tx.query(`/* analyzePartitionedTable */ analyze ${only}${table}`);
      analysed.push(table);
    }
    return analysed;
  });
}

/**
 * The periodic creation of every set's partitions ahead of time (src/jobs/tasks.ts says when),
 * then the ANALYZE of its partitioned tables when their statistics are stale.
 * Any number of processes may run it at once (an advisory lock per set).
 */
export function partitionsRun(
  db: Database,
  sets: readonly PartitionSet[],
  log: { info: (o: object, msg: string) => void },
): () => Promise<void> {
  return async () => {
    for (const set of sets) {
      const r = await ensurePartitions(db, set);
      if (r.created.length > 0) log.info({ component: 'partitions', set: set.name, ...r }, 'partitions created');
      const analysed = await analyzeStaleParents(db, set);
      if (analysed.length > 0)
        log.info({ component: 'partitions', set: set.name, analysed }, 'partitioned tables analysed');
    }
  };
}
