import type { Queryable } from '../../db/types.js';
import { type PartitionSet, rangeAfter, rangeOf } from '../../db/partitions.js';

/**
 * The monthly partitions of price_observations (migrations/0014, docs/PRICES.md "Partitions"):
 * price_observations_pYYYYMM for [first of the month, first of the next) in UTC, and
 * price_observations_default for whatever no month covers; price_hours_pYYYYMM and
 * price_days_pYYYYMM, price_blocks_pYYYYMM, price_local_days_pYYYYMM and price_day_texts_pYYYYMM
 * beside each.
 * Created and dropped by the shared
 * partition code (src/db/partitions.ts).
 */

export const OBSERVATION_PARTITIONS: PartitionSet = {
  name: 'observations',
  unit: 'month',
  // The hourly and daily aggregates (migrations/0015, 0017) go with the observations they
  // aggregate: created and dropped together (a UTC hour and a UTC day lie in one UTC month), so
  // the aggregates stay those of the rows left.
  tables: [
    { table: 'price_observations', column: 'observed_at' },
    { table: 'price_hours', column: 'hour' },
    { table: 'price_days', column: 'day' },
    // The blocks of whole days (migrations/0022): a block lies in one UTC month.
    { table: 'price_blocks', column: 'block' },
    // The local days of HISTORY_ZONES (migrations/0024), by the month their local day starts
    // in; those starting earlier that reach into a month go before it (localDaysReaching).
    { table: 'price_local_days', column: 'day' },
    // The month texts of the UTC days (migrations/0025): one month each.
    { table: 'price_day_texts', column: 'month' },
  ],
  ahead: 3,
  back: 120,
  lock: 7_245_126,
};

export interface MonthPartition {
  name: string;
  /** Inclusive lower bound, the first instant of the month in UTC. */
  from: Date;
  /** Exclusive upper bound, the first instant of the next month in UTC. */
  to: Date;
}

const named = (r: { suffix: string; from: Date; to: Date }): MonthPartition => ({
  name: `price_observations_${r.suffix}`,
  from: r.from,
  to: r.to,
});

/** The UTC month holding `t`. */
export const monthOf = (t: Date): MonthPartition => named(rangeOf('month', t));

/** The month `n` months after the one holding `t`. */
export const monthAfter = (t: Date, n: number): MonthPartition => named(rangeAfter('month', t, n));

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

/**
 * Deletes the local days (migrations/0024) that start before `from` and end after it: they hold
 * hours of the month starting at `from`, which is about to be dropped, and no partition of theirs
 * goes with it. Retention drops months oldest first, so they sit in the default partition (or in
 * the month before, when that one is kept): at most the last day of the month before, per
 * product and zone.
 */
export async function deleteLocalDaysReaching(db: Queryable, from: Date): Promise<void> {
  await db.query(
    `/* deleteLocalDaysReaching */
     delete from price_local_days where day < $1 and day >= $1::timestamptz - interval '25 hours' and day_end > $1`,
    [from.toISOString()],
  );
}

/**
 * Deletes up to `limit` span rows (migrations/0027) of the products and midnights whose spans
 * hold days before `to`: a month up to it was detached, and spans reach over months, so they
 * hold its days. Every span of such a product and midnight goes (a product has all of them or
 * none); the trends read them only once the background task builds them again, and meanwhile
 * see, by each series' oldest day row, that they are stale. Returns how many rows went.
 */
export async function deleteSpansBefore(db: Queryable, to: Date, limit: number): Promise<number> {
  const r = await db.query(
    `/* deleteSpansBefore */
     delete from price_spans s
      using (select distinct product_id, d1 from price_spans where first_day < $1 limit $2) old
      where s.product_id = old.product_id and s.d1 = old.d1`,
    [to.toISOString(), Math.max(1, Math.floor(limit / 100))],
  );
  return r.rowCount;
}
