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
/** The hourly aggregates (migrations/0015) are partitioned alike: price_hours_pYYYYMM beside each month. */
const HOURS_DEFAULT_PARTITION = 'price_hours_default';
const hoursName = (m: MonthPartition) => m.name.replace('price_observations_', 'price_hours_');
const bounds = (m: MonthPartition) => `for values from ('${m.from.toISOString()}') to ('${m.to.toISOString()}')`;

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
  await tx.query(`/* createMonth */ create table if not exists ${m.name} partition of price_observations ${bounds(m)}`);
  await createHoursMonth(tx, m);
}

/**
 * The month of the hourly aggregates beside the observations' one (nothing when it exists): made
 * out of the default partition's hours of the month when it holds any (they are there exactly
 * when the observations' default partition held the month's observations).
 */
async function createHoursMonth(tx: Queryable, m: MonthPartition): Promise<void> {
  const name = hoursName(m);
  const exists = await tx.query<{ t: string | null }>(`/* hoursMonthExists */ select to_regclass($1)::text as t`, [
    name,
  ]);
  if (exists.rows[0]?.t) return;
  await tx.query(
    `/* createHoursMonthTable */ create table ${name} (like price_hours including defaults including constraints)`,
  );
  await tx.query(
    `/* moveHoursFromDefault */
     with gone as (delete from ${HOURS_DEFAULT_PARTITION} where hour >= $1 and hour < $2 returning *)
     insert into ${name} select * from gone`,
    [m.from.toISOString(), m.to.toISOString()],
  );
  await tx.query(`/* attachHoursMonth */ alter table price_hours attach partition ${name} ${bounds(m)}`);
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
  await tx.query(`/* attachMonth */ alter table price_observations attach partition ${m.name} ${bounds(m)}`);
  await createHoursMonth(tx, m);
  return moved.rowCount;
}

/**
 * Detaches and drops a whole month, its observations and their hourly aggregates: they go in
 * the time of a few catalogue changes, whatever their number. (Dropping fires no trigger; the
 * hours go with the observations they aggregate, so the aggregates stay those of the rows left.)
 */
export async function dropMonth(tx: Queryable, m: MonthPartition): Promise<void> {
  await tx.query(`/* detachMonth */ alter table price_observations detach partition ${m.name}`);
  await tx.query(`/* dropMonth */ drop table ${m.name}`);
  const hours = hoursName(m);
  const attached = await tx.query(
    `/* hoursMonthAttached */ select 1 from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'price_hours'::regclass and c.relname = $1`,
    [hours],
  );
  if (attached.rows.length > 0)
    await tx.query(`/* detachHoursMonth */ alter table price_hours detach partition ${hours}`);
  await tx.query(`/* dropHoursMonth */ drop table if exists ${hours}`);
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
