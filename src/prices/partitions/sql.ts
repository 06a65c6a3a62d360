import type { Queryable } from '../../db/types.js';

/**
 * The monthly partitions of price_observations (migrations/0014, docs/PRICES.md "Partitions"):
 * price_observations_pYYYYMM for [first of the month, first of the next) in UTC, and
 * price_observations_default for whatever no month covers.
 */

export interface MonthPartition {
  name: string;
  /** Inclusive lower bound, the first instant of the month in UTC. */
  from: Date;
  /** Exclusive upper bound, the first instant of the next month in UTC. */
  to: Date;
}

export const DEFAULT_PARTITION = 'price_observations_default';

/** The UTC month holding `t`. */
export function monthOf(t: Date): MonthPartition {
  const from = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1));
  const to = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
  const name = `price_observations_p${from.getUTCFullYear()}${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name, from, to };
}

/** The month `n` months after the one holding `t`. */
export function monthAfter(t: Date, n: number): MonthPartition {
  return monthOf(new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + n, 1)));
}

/** The monthly partitions that exist, oldest first. */
export async function listMonthPartitions(db: Queryable): Promise<MonthPartition[]> {
  const r = await db.query<{ name: string }>(
    `/* listMonthPartitions */
     select c.relname as name from pg_inherits i
       join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'price_observations'::regclass and c.relname ~ '^price_observations_p[0-9]{6}$'
      order by c.relname`,
  );
  return r.rows.map((row) => {
    const y = Number(row.name.slice(-6, -2));
    const m = Number(row.name.slice(-2));
    return monthOf(new Date(Date.UTC(y, m - 1, 1)));
  });
}

/** Taken (for the transaction) by whoever creates, fills or drops partitions, so several processes take turns. */
const PARTITION_LOCK = 7_245_126;

export async function lockPartitions(tx: Queryable): Promise<void> {
  await tx.query('/* lockPartitions */ select pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
}

/** Whether the default partition holds observations in the month. */
export async function defaultHoldsMonth(tx: Queryable, m: MonthPartition): Promise<boolean> {
  const r = await tx.query(
    `/* defaultHoldsMonth */ select 1 from ${DEFAULT_PARTITION} where observed_at >= $1 and observed_at < $2 limit 1`,
    [m.from.toISOString(), m.to.toISOString()],
  );
  return r.rows.length > 0;
}

/** The months (UTC) the default partition holds observations of, within [from, to). */
export async function monthsInDefault(db: Queryable, from: Date, to: Date): Promise<Date[]> {
  const r = await db.query<{ m: Date }>(
    `/* monthsInDefault */
     select distinct date_trunc('month', observed_at, 'UTC') as m from ${DEFAULT_PARTITION}
      where observed_at >= $1 and observed_at < $2 order by 1`,
    [from.toISOString(), to.toISOString()],
  );
  return r.rows.map((row) => new Date(row.m));
}

/** Creates the month's partition (nothing when it exists). The default partition must hold none of its rows. */
export async function createMonth(tx: Queryable, m: MonthPartition): Promise<void> {
  await tx.query(
    `/* createMonth */ create table if not exists ${m.name} partition of price_observations
       for values from ('${m.from.toISOString()}') to ('${m.to.toISOString()}')`,
  );
}

/**
 * Creates the month's partition out of the rows the default partition holds for it: a table of
 * the same shape takes them (inserted into it directly, so the observations' trigger, which is
 * on price_observations, does not see them as new), then is attached as the month.
 */
export async function createMonthFromDefault(tx: Queryable, m: MonthPartition): Promise<number> {
  await tx.query(
    `/* createMonthTable */ create table ${m.name} (like price_observations including defaults including constraints)`,
  );
  const moved = await tx.query(
    `/* moveFromDefault */
     with gone as (delete from ${DEFAULT_PARTITION} where observed_at >= $1 and observed_at < $2 returning *)
     insert into ${m.name} select * from gone`,
    [m.from.toISOString(), m.to.toISOString()],
  );
  await tx.query(
    `/* attachMonth */ alter table price_observations attach partition ${m.name}
       for values from ('${m.from.toISOString()}') to ('${m.to.toISOString()}')`,
  );
  return moved.rowCount;
}

/** Detaches and drops a whole month: its observations go in the time of two catalogue changes, whatever their number. */
export async function dropMonth(tx: Queryable, m: MonthPartition): Promise<void> {
  await tx.query(`/* detachMonth */ alter table price_observations detach partition ${m.name}`);
  await tx.query(`/* dropMonth */ drop table ${m.name}`);
}

/** Deletes up to `limit` observations before `cutoff` (the edge month and the default partition); returns how many. */
export async function deleteObservationsBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const r = await db.query(
    `/* deleteObservationsBefore */
     delete from price_observations p
      using (select id, observed_at from price_observations where observed_at < $1 limit $2) old
      where p.id = old.id and p.observed_at = old.observed_at`,
    [cutoff.toISOString(), limit],
  );
  return r.rowCount;
}
