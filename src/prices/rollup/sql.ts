import type { Queryable } from '../../db/types.js';

/**
 * The retention roll-up's SQL (docs/prices/HISTORY.md, "Retention"). A series is
 * (product_id, competitor_id), competitor '' standing for our own shop in keys.
 */

export interface SeriesKey {
  productId: string;
  competitorId: string | null;
}

/** `o.competitor_id` matching the series' `$n`: an index condition either way (`is not distinct from` is not one). */
const competitorIs = (key: SeriesKey, n: number) =>
  key.competitorId === null ? `competitor_id is null and $${n}::text is null` : `competitor_id = $${n}`;

/** The next series, in key order, after `after`, that has observations before the cutoff. */
export async function nextSeries(
  db: Queryable,
  after: SeriesKey | undefined,
  cutoff: Date,
  limit: number,
): Promise<SeriesKey[]> {
  const r = await db.query<{ product_id: string; competitor_id: string | null }>(
    `/* nextSeries */ select product_id, competitor_id from price_series
      where first_observed_at < $1
        and ($2::text is null or (product_id, coalesce(competitor_id, '')) > ($2::text, $3::text))
      order by product_id, coalesce(competitor_id, '')
      limit $4`,
    [cutoff.toISOString(), after?.productId ?? null, after ? (after.competitorId ?? '') : null, limit],
  );
  return r.rows.map((row) => ({ productId: row.product_id, competitorId: row.competitor_id }));
}

/**
 * The next window to roll up of a series, from the first hour at or after `from` holding an
 * observation, to the hour of its `rows`-th observation (at least one whole hour), never past
 * the cutoff; to the cutoff when fewer than `rows` are left (not just one hour: a series of a
 * few thousand rows took one transaction per hour). Null when nothing is left before the cutoff.
 */
export async function nextWindow(
  db: Queryable,
  key: SeriesKey,
  from: Date,
  cutoff: Date,
  rows: number,
): Promise<{ lo: Date; hi: Date } | null> {
  const r = await db.query<{ lo: Date | null; hi: Date | null }>(
    `/* nextWindow */ with f as (
       select date_trunc('hour', min(observed_at), 'UTC') as lo from price_observations
        where product_id = $1 and ${competitorIs(key, 2)} and observed_at >= $3 and observed_at < $4
     )
     select f.lo, least($4::timestamptz, greatest(f.lo + interval '1 hour', coalesce((
              select date_trunc('hour', observed_at, 'UTC') from price_observations
               where product_id = $1 and ${competitorIs(key, 2)} and observed_at >= f.lo and observed_at < $4
               order by observed_at offset $5 limit 1), $4::timestamptz))) as hi
       from f`,
    [key.productId, key.competitorId, from.toISOString(), cutoff.toISOString(), rows],
  );
  const row = r.rows[0];
  if (!row?.lo) return null;
  return { lo: row.lo, hi: row.hi ?? cutoff };
}

/**
 * Rolls up the observations of one series in [lo, hi) (whole UTC hours): per currency and UTC
 * hour, the first, the last, a lowest and a highest observation stay (one row may be several of
 * them) and every other row goes. The first row takes over the samples and the price sum of
 * the rows that go, so every count and sum over whole hours stays exact. Running it again
 * changes nothing; rows that arrive later in a rolled-up hour are folded in the same way.
 * Locks the series (as the insert trigger does) so two roll-ups of it take turns.
 */
export async function rollupWindow(
  db: Queryable,
  key: SeriesKey,
  lo: Date,
  hi: Date,
): Promise<{ deleted: number; updated: number }> {
  await db.query(
    `/* lockSeriesForRollup */ select 1 from price_series where product_id = $1 and ${competitorIs(key, 2)} for update`,
    [key.productId, key.competitorId],
  );
  const r = await db.query<{ deleted: number | string; updated: number | string }>(
    `/* rollupWindow */ with o as (
       select id, currency, h, samples, total,
              row_number() over (partition by currency, h order by observed_at, id) = 1 as first,
              (row_number() over (partition by currency, h order by observed_at, id) = 1
               or row_number() over (partition by currency, h order by observed_at desc, id desc) = 1
               or row_number() over (partition by currency, h order by price, observed_at, id) = 1
               or row_number() over (partition by currency, h order by price desc, observed_at, id) = 1) as keep
         from (select id, currency, price, observed_at, samples, coalesce(price_sum, price * samples) as total,
                      date_trunc('hour', observed_at, 'UTC') as h
                 from price_observations
                where product_id = $1 and ${competitorIs(key, 2)} and observed_at >= $3 and observed_at < $4) x
     ),
     g as (
       select currency, h, sum(samples) filter (where first or not keep) as samples,
              sum(total) filter (where first or not keep) as total
         from o group by currency, h
       having bool_or(not keep)
     ),
     del as (delete from price_observations p using o where p.id = o.id and not o.keep returning 1),
     upd as (
       update price_observations p set samples = g.samples, price_sum = g.total
         from o join g on g.currency = o.currency and g.h = o.h
        where p.id = o.id and o.first
       returning 1
     )
     select (select count(*) from del) as deleted, (select count(*) from upd) as updated`,
    [key.productId, key.competitorId, lo.toISOString(), hi.toISOString()],
  );
  const row = r.rows[0]!;
  return { deleted: Number(row.deleted), updated: Number(row.updated) };
}
