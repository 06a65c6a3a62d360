import { retryLockTimeouts, shortLockWaits } from './partitions.js';
import type { Database } from './types.js';

/**
 * Indexes of partitioned tables built without holding the tables' writers (docs/SCALING.md,
 * "Indexes built online"). A migration declares the index on the partitioned table alone
 * (`create index ... on only <table>`): instant, and invalid until every partition has its
 * own; partitions created afterwards get theirs with them. This builds each existing
 * partition's index with CREATE INDEX CONCURRENTLY (reads and writes go on; each build waits
 * for the transactions already running), attaches it to the partitioned table's, and once
 * that one is valid drops the index it replaces. CREATE INDEX in a migration would hold every
 * writer for the whole build: minutes at 50 M observations, hours at billions.
 *
 * Any number of processes may run it at once: a partition whose index another session is
 * building (pg_stat_progress_create_index) is left to that session, two builds started at the
 * same moment mostly leave one going (CONCURRENT_BUILD; the tests saw a partition built by both,
 * one after the other: wasted work, never a wrong index), a build that failed (a crash, a
 * cancel, that race) leaves an invalid index that the next run drops and builds again, and
 * attaching or dropping twice is harmless. Idempotent: a run with nothing to do reads the
 * catalogue and returns.
 */
export interface OnlineIndex {
  /** The partitioned table's index, as a migration declared it ON ONLY the table. */
  index: string;
  /** An index of the same table it makes redundant, dropped once `index` is valid. */
  replaces?: string;
}

export interface OnlineIndexRun {
  index: string;
  /** The partitions' indexes built (names). */
  built: string[];
  /** Whether the partitioned table's index is valid at the end: every partition has one. */
  valid: boolean;
  /** Whether `replaces` was dropped by this run. */
  dropped: boolean;
}

interface Parent {
  table: string;
  valid: boolean;
  /** The index's definition from USING on, the same for every partition. */
  using: string;
}

async function parentOf(db: Database, index: string): Promise<Parent | undefined> {
  const r = await db.query<{ table: string; valid: boolean; def: string }>(
    `/* onlineIndexParent */
     select i.indrelid::regclass::text as table, i.indisvalid as valid, pg_get_indexdef(i.indexrelid) as def
       from pg_index i where i.indexrelid = to_regclass($1)`,
    [index],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  const at = row.def.indexOf(' USING ');
  if (at < 0) throw new Error(`${index}: cannot read its definition: ${row.def}`);
  return { table: row.table, valid: row.valid, using: row.def.slice(at + 1) };
}

/** The partitions of the index's table with no index attached to it, the latest name first. */
async function partitionsWithout(db: Database, table: string, index: string): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `/* partitionsWithoutIndex */
     select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = $1::regclass
        and not exists (select 1 from pg_inherits ii join pg_index x on x.indexrelid = ii.inhrelid
                         where ii.inhparent = $2::regclass and x.indrelid = c.oid)
      order by c.relname desc`,
    [table, index],
  );
  return r.rows.map((row) => row.name);
}

/** Whether any session is building an index of `table` now. */
async function buildRunning(db: Database, table: string): Promise<boolean> {
  const r = await db.query(
    `/* indexBuildRunning */ select 1 from pg_stat_progress_create_index where relid = $1::regclass`,
    [table],
  );
  return r.rows.length > 0;
}

/** The index named `name`: whether it is valid, or undefined when there is none. */
async function validity(db: Database, name: string): Promise<boolean | undefined> {
  const r = await db.query<{ valid: boolean }>(
    `/* indexValidity */ select indisvalid as valid from pg_index where indexrelid = to_regclass($1)`,
    [name],
  );
  return r.rows[0]?.valid;
}

/**
 * What a build meets when another session started the same one at the same moment: the name
 * taken (42P07, or 23505 from the catalogue's unique index), or the two builds waiting for each
 * other's snapshot (40P01). The other build goes on; a build cut short leaves an invalid index
 * that the next run drops and builds again (two runs dropping it at once: one of them fails with
 * "tuple concurrently updated", seen in CI, and leaves it to the other).
 */
const CONCURRENT_BUILD = ['42P07', '23505', '40P01'];

/** CONCURRENT_BUILD, or two sessions dropping the same failed build at once (XX000 from the catalogue). */
function racedWithAnotherBuild(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return (
    CONCURRENT_BUILD.includes(String(e?.code)) ||
    (e?.code === 'XX000' && String(e.message).includes('tuple concurrently updated'))
  );
}

/** `<index>_<partition's suffix>`: price_observations_series_cover_p202611 for price_observations_p202611. */
const childName = (index: string, table: string, partition: string) =>
  `${index}_${partition.startsWith(`${table}_`) ? partition.slice(table.length + 1) : partition}`;

/** A catalogue change that gives way to requests as partition maintenance does (250 ms, retried). */
const withShortLockWaits = (db: Database, sql: string) =>
  retryLockTimeouts(() =>
    db.transaction(async (tx) => {
      await shortLockWaits(tx);
      await tx.query(sql);
    }),
  );

/**
 * Builds what is missing of each index (see above), one partition at a time, the latest months
 * first (the ones read most); `stop` is checked between partitions.
 */
export async function buildOnlineIndexes(
  db: Database,
  indexes: readonly OnlineIndex[],
  stop: () => boolean = () => false,
): Promise<OnlineIndexRun[]> {
  const out: OnlineIndexRun[] = [];
  for (const { index, replaces } of indexes) {
    const parent = await parentOf(db, index);
    if (!parent) continue;
    const run: OnlineIndexRun = { index, built: [], valid: parent.valid, dropped: false };
    out.push(run);
    if (!parent.valid) {
      for (const partition of await partitionsWithout(db, parent.table, index)) {
        if (stop()) return out;
        if (await buildRunning(db, partition)) continue;
        const name = childName(index, parent.table, partition);
        try {
          // Invalid, then no build running, then invalid still: a build that failed (a second
          // build of the name cannot start while it exists, and a finished one is valid).
          if ((await validity(db, name)) === false) {
            if (await buildRunning(db, partition)) continue;
            if ((await validity(db, name)) === false)
              await db.query(`/* dropFailedIndexBuild */ drop index concurrently if exists ${name}`);
          }
          if ((await validity(db, name)) === undefined) {
            await db.query(
              `/* buildPartitionIndex */ create index concurrently ${name} on ${partition} ${parent.using}`,
            );
            run.built.push(name);
          }
        } catch (err) {
          if (!racedWithAnotherBuild(err)) throw err;
          continue;
        }
        // Another session's build of the same name may still be running: it attaches its own.
        if ((await validity(db, name)) !== true) continue;
        await withShortLockWaits(db, `/* attachPartitionIndex */ alter index ${index} attach partition ${name}`);
      }
      run.valid = (await parentOf(db, index))?.valid === true;
    }
    if (run.valid && replaces !== undefined && (await validity(db, replaces)) !== undefined) {
      await withShortLockWaits(db, `/* dropReplacedIndex */ drop index if exists ${replaces}`);
      run.dropped = true;
    }
  }
  return out;
}
