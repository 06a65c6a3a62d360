import type { Database, Queryable } from './types.js';
import {
  detachedTables,
  MAINTENANCE_LOCK_TIMEOUT_MS,
  type PartitionSet,
  partitionName,
  type Range,
} from './partitions.js';

/**
 * Packing a closed partition: its rows rewritten in the order of its primary key, so the rows a
 * read wants (one product's month of days) lie on a few pages instead of one page per day they
 * were written on (docs/SCALING.md, "Packed months"). What CLUSTER does, without holding the
 * partition's readers for the rewrite:
 *
 * 1. One transaction holds the set's advisory lock (no creation or retention of its ranges
 *    meanwhile) and a SHARE lock on the partition: readers go on, writers of that range (late
 *    data) wait until the commit. It copies the rows in key order into a new table of the same
 *    shape, with the range as a CHECK constraint (so the attach below need not scan it), builds
 *    the partition's indexes on it, and adds its foreign keys as NOT VALID, then validates them
 *    (one anti-join each, instead of a check per row; the attach adopts validated equal keys
 *    instead of checking them again).
 * 2. In the same transaction, the swap: the partitioned table and the partition locked ACCESS
 *    EXCLUSIVE with MAINTENANCE_LOCK_TIMEOUT_MS, as all partition maintenance is (retried from a
 *    savepoint, the copy kept), the old partition detached and renamed away, the new one attached
 *    under the old name, its index names made the old ones: catalogue changes only.
 * 3. After the commit, the old table dropped in a transaction of its own (unlinking its files
 *    takes time in proportion to their size), and the new one vacuumed and analysed: hint bits
 *    and the visibility map set once here, not by the first readers.
 *
 * A crash before the commit leaves nothing (DDL is transactional); after it, the old table is
 * dropped by the next run (`dropUnpacked`). PostgreSQL only: on the embedded engine, which runs
 * one statement at a time, the copy would stop every request for its length.
 */

export interface PackResult {
  table: string;
  rows: number;
  /** Milliseconds of the copy (rows, indexes, keys) and of the swap's locks. */
  copyMs: number;
  swapMs: number;
  dropMs: number;
  vacuumMs: number;
}

/** The comment a packed partition carries: what says it is done. */
const PACKED_MARK = 'packed in primary key order';
const UNPACKED = '_unpacked';
const PACKING = '_packing';
/** How long the copy waits for the partition's writers before it gives way (autovacuum yields after 1 s). */
const COPY_LOCK_TIMEOUT_MS = 2_000;
const SWAP_ATTEMPTS = 8;
const LOCK_NOT_AVAILABLE = '55P03';

const isLockTimeout = (err: unknown) => (err as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;

async function lockTimeout(tx: Queryable, ms: number): Promise<void> {
  await tx.query(`/* packLockTimeout */ select set_config('lock_timeout', $1, true)`, [`${ms}ms`]);
}

/** Whether `table`'s partition of the range exists and is not packed yet. */
export async function needsPacking(db: Queryable, table: string, r: Range): Promise<boolean> {
  const q = await db.query<{ mark: string | null }>(
    `/* partitionPackMark */
     select obj_description(c.oid, 'pg_class') as mark from pg_class c
      where c.oid = to_regclass($1) and c.relispartition`,
    [partitionName(table, r)],
  );
  const row = q.rows[0];
  return row !== undefined && !(row.mark ?? '').startsWith(PACKED_MARK);
}

interface IndexDef {
  name: string;
  def: string;
  primary: boolean;
}

async function indexesOf(tx: Queryable, table: string): Promise<IndexDef[]> {
  const q = await tx.query<IndexDef>(
    `/* partitionIndexes */
     select c.relname as name, pg_get_indexdef(i.indexrelid) as def, i.indisprimary as primary
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = $1::regclass order by c.relname`,
    [table],
  );
  return q.rows;
}

/**
 * Packs `table`'s partition of the range (see above). Returns undefined when there was nothing to
 * do or it gave way to others (another process packing or maintaining the set, writers holding
 * the partition, readers holding the swap off): the next run tries again.
 */
export async function packPartition(
  db: Database,
  set: PartitionSet,
  table: string,
  column: string,
  r: Range,
  opts: {
    /** The order to write the rows in (columns, as in ORDER BY); default the primary key's. */
    orderBy?: string;
    /** Rewrite it even when it is packed already (the benchmark's layouts). */
    force?: boolean;
    afterCopy?: () => Promise<void>;
  } = {},
): Promise<PackResult | undefined> {
  if (db.kind !== 'postgres') return undefined;
  const name = partitionName(table, r);
  const packing = `${name}${PACKING}`;
  const unpacked = `${name}${UNPACKED}`;
  const t0 = Date.now();
  let copyMs = 0;
  let done: { rows: number; swapMs: number };
  try {
    done = await db.transaction(async (tx) => {
      const lock = await tx.query<{ ok: boolean }>('/* packSetLock */ select pg_try_advisory_xact_lock($1) as ok', [
        set.lock,
      ]);
      if (!lock.rows[0]?.ok || (!opts.force && !(await needsPacking(tx, table, r)))) throw new GaveWay();
      await lockTimeout(tx, COPY_LOCK_TIMEOUT_MS);
      await giveWayOnLockTimeout(() => tx.query(`/* packHoldWriters */ lock table ${name} in share mode`));
      await lockTimeout(tx, 0);
      const rows = await copyInOrder(tx, name, packing, column, r, opts.orderBy);
      await opts.afterCopy?.();
      copyMs = Date.now() - t0;
      const swapAt = Date.now();
      await lockForSwap(tx, table, name);
      await swap(tx, table, name, packing, unpacked, r);
      await tx.query(
        `/* packMark */ comment on table ${name} is '${PACKED_MARK} at ${new Date().toISOString()}, ${rows.count} rows'`,
      );
      return { rows: rows.count, swapMs: Date.now() - swapAt };
    });
  } catch (err) {
    if (err instanceof GaveWay) return undefined;
    throw err;
  }
  const dropAt = Date.now();
  await db.query(`/* packDropOld */ drop table if exists ${unpacked}`);
  const vacuumAt = Date.now();
  await db.query(`/* packVacuum */ vacuum (analyze) ${name}`);
  return {
    table: name,
    rows: done.rows,
    copyMs,
    swapMs: done.swapMs,
    dropMs: vacuumAt - dropAt,
    vacuumMs: Date.now() - vacuumAt,
  };
}

/** Thrown inside the pack's transaction to roll it back and leave the partition to a later run. */
class GaveWay extends Error {}

async function giveWayOnLockTimeout(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw isLockTimeout(err) ? new GaveWay() : err;
  }
}

/**
 * Copies the partition into `packing` in `orderBy` (default its primary key's order), with its
 * indexes (named after `packing`, renamed at the swap) and validated foreign keys.
 */
async function copyInOrder(
  tx: Queryable,
  name: string,
  packing: string,
  column: string,
  r: Range,
  orderBy: string | undefined,
): Promise<{ count: number }> {
  await tx.query(
    `/* packCreate */ create table ${packing} (like ${name} including defaults including constraints including storage including statistics)`,
  );
  await tx.query(
    `/* packRangeCheck */ alter table ${packing} add constraint ${packing}_range
       check (${column} >= '${r.from.toISOString()}' and ${column} < '${r.to.toISOString()}')`,
  );
  const indexes = await indexesOf(tx, name);
  const primary = indexes.find((i) => i.primary);
  const order = orderBy ?? (primary && /\((.*)\)\s*$/.exec(primary.def)?.[1]);
  if (!order) throw new Error(`${name}: no primary key to pack by`);
  const copied = await tx.query(`/* packCopy */ insert into ${packing} select * from ${name} order by ${order}`);
  for (const [n, idx] of indexes.entries()) {
    const tmpName = `${packing}_i${n}`;
    const def = idx.def.replace(/^(CREATE (?:UNIQUE )?INDEX )\S+ ON \S+ /, `$1${tmpName} ON ${packing} `);
    if (def === idx.def) throw new Error(`${name}: cannot read the index ${idx.name}: ${idx.def}`);
    await tx.query(`/* packIndex */ ${def}`);
    if (idx.primary)
      await tx.query(
        `/* packPrimaryKey */ alter table ${packing} add constraint ${tmpName} primary key using index ${tmpName}`,
      );
  }
  const fks = await tx.query<{ name: string; def: string }>(
    `/* partitionForeignKeys */
     select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
      where conrelid = $1::regclass and contype = 'f' order by conname`,
    [name],
  );
  for (const fk of fks.rows) {
    await tx.query(`/* packForeignKey */ alter table ${packing} add constraint ${fk.name} ${fk.def} not valid`);
    await tx.query(`/* packValidateForeignKey */ alter table ${packing} validate constraint ${fk.name}`);
  }
  return { count: copied.rowCount };
}

/**
 * The partitioned table and the partition, ACCESS EXCLUSIVE, as partition maintenance takes them
 * (src/db/partitions.ts, withSetLocked), retried from a savepoint. Gives way at once when a
 * session waits for a lock the pack holds: a writer of the range waiting for the copy's SHARE
 * lock holds the partitioned table itself, so neither could go on.
 */
async function lockForSwap(tx: Queryable, table: string, name: string): Promise<void> {
  await lockTimeout(tx, MAINTENANCE_LOCK_TIMEOUT_MS);
  for (let attempt = 1; ; attempt++) {
    const waiting = await tx.query<{ n: number }>(
      `/* packWaitedFor */ select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))`,
    );
    if (Number(waiting.rows[0]!.n) > 0) throw new GaveWay();
    await tx.query('savepoint pack_swap');
    try {
      await tx.query(`/* packLockTables */ lock table ${table}, ${name} in access exclusive mode`);
      return;
    } catch (err) {
      await tx.query('rollback to savepoint pack_swap');
      if (!isLockTimeout(err)) throw err;
      if (attempt >= SWAP_ATTEMPTS) throw new GaveWay();
      const backoff = 50 * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
    }
  }
}

/** Detaches the old partition, attaches the packed one under its name and index names: catalogue changes only. */
async function swap(tx: Queryable, table: string, name: string, packing: string, unpacked: string, r: Range) {
  const oldIndexes = await indexesOf(tx, name);
  const newIndexes = await indexesOf(tx, packing);
  await tx.query(`/* packDetach */ alter table ${table} detach partition ${name}`);
  await tx.query(`/* packRenameOld */ alter table ${name} rename to ${unpacked}`);
  for (const [n, idx] of oldIndexes.entries())
    await tx.query(`/* packRenameOldIndex */ alter index ${idx.name} rename to ${unpacked}_i${n}`);
  await tx.query(
    `/* packAttach */ alter table ${table} attach partition ${packing}
       for values from ('${r.from.toISOString()}') to ('${r.to.toISOString()}')`,
  );
  await tx.query(`/* packRenameNew */ alter table ${packing} rename to ${name}`);
  // indexesOf orders by name, and the packing table's are named by the old ones' position.
  for (const idx of newIndexes) {
    const n = Number(/_i(\d+)$/.exec(idx.name)![1]);
    await tx.query(`/* packRenameIndex */ alter index ${idx.name} rename to ${oldIndexes[n]!.name}`);
  }
  await tx.query(`/* packDropRangeCheck */ alter table ${name} drop constraint ${packing}_range`);
}

/** Drops the old tables of packs whose process stopped between the swap's commit and the drop. */
export async function dropUnpacked(db: Database, tables: readonly string[]): Promise<string[]> {
  const dropped: string[] = [];
  for (const table of tables)
    for (const name of await detachedTables(db, table, `${table}\\_p%${UNPACKED.replace('_', '\\_')}`)) {
      await db.query(`/* packDropOld */ drop table if exists ${name}`);
      dropped.push(name);
    }
  return dropped;
}
