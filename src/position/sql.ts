import { convertedSql, rateJoin } from '../money/convert.js';
import type { ProductPosition } from './schemas.js';

/**
 * A product's price position (docs/prices/TRENDS.md, "Position"): where our price stands among
 * the competitors' latest prices. The one definition, as SQL to place beside a product row in
 * the same statement; `GET /products/{id}` (`monitoring.position`), `/products.csv` and
 * `GET /products/{id}/trends` all read it.
 *
 * - Each series of the product (price_series: one per competitor, and ours) counts with its
 *   latest price converted into the product's currency with the account's rates (src/money).
 * - Compared: a competitor whose latest offer is in stock or of unknown stock and whose price
 *   converts. Left out: out of stock, or no rate.
 * - Our price: our own series' latest (null when it does not convert), else base_price.
 * - Rank: 1 + the compared competitors strictly cheaper than us; price index: our price over the
 *   compared average x 100.
 *
 * One probe of price_series_key per product and two of the exchange_rates key per series in
 * another currency.
 */

/** The series rows of product `p`: own, in_stock, conv (converted latest price), cmp (compared), me (our price), lo (lowest compared). */
function seriesOf(p: string): string {
  return `/* seriesOf */ select s.*,
                 case when bool_or(s.own) over () then max(s.conv) filter (where s.own) over () else ${p}.base_price end as me,
                 min(s.conv) filter (where s.cmp) over () as lo
            from (
              select s.competitor_id, s.competitor_id is null as own, s.latest_in_stock as in_stock, v.conv,
                     s.competitor_id is not null and s.latest_in_stock is not false and v.conv is not null as cmp
                from price_series s
                ${rateJoin('fx', `${p}.account_id`, 's.latest_currency', `${p}.currency`)}
                cross join lateral (select ${convertedSql('s.latest_price', 'fx', 's.latest_currency', `${p}.currency`)} as conv) v
               where s.product_id = ${p}.id and s.latest_observed_at is not null
            ) s`;
}

/**
 * The position of the product in table alias `p` (which must have id, account_id, currency and
 * base_price), as a lateral subquery: `from products p cross join lateral ${positionSql('p')} pos`.
 * One row, whatever the product has. Its columns:
 *
 * own_observed, own_price, compared, left_out_of_stock, left_no_rate, in_stock, out_of_stock,
 * stock_unknown (competitors by the stock of their latest), lowest, average, highest,
 * cheapest_id, cheapest_tied (other compared competitors at the lowest price), rank, price_index.
 */
export function positionSql(p: string): string {
  return `(
    select coalesce(bool_or(s.own), false) as own_observed,
           case when coalesce(bool_or(s.own), false) then max(s.conv) filter (where s.own) else ${p}.base_price end as own_price,
           count(*) filter (where s.cmp)::int as compared,
           count(*) filter (where not s.own and s.in_stock is false)::int as left_out_of_stock,
           count(*) filter (where not s.own and s.in_stock is not false and s.conv is null)::int as left_no_rate,
           count(*) filter (where not s.own and s.in_stock)::int as in_stock,
           count(*) filter (where not s.own and s.in_stock is false)::int as out_of_stock,
           count(*) filter (where not s.own and s.in_stock is null)::int as stock_unknown,
           min(s.conv) filter (where s.cmp) as lowest,
           round(avg(s.conv) filter (where s.cmp), 4) as average,
           max(s.conv) filter (where s.cmp) as highest,
           (array_agg(s.competitor_id order by s.conv, s.competitor_id) filter (where s.cmp))[1] as cheapest_id,
           greatest(count(*) filter (where s.cmp and s.conv = s.lo) - 1, 0)::int as cheapest_tied,
           case when count(*) filter (where s.cmp) > 0 and max(s.me) is not null
                then 1 + count(*) filter (where s.cmp and s.conv < s.me) end::int as rank,
           round(max(s.me) / nullif(avg(s.conv) filter (where s.cmp), 0) * 100, 2) as price_index
      from (${seriesOf(p)}) s
  )`;
}

/** The position's columns as products read them, beside a product row: `pos_<column>`. */
export const POSITION_COLUMNS = `pos.own_price::text as pos_own_price, pos.own_observed as pos_own_observed, pos.compared as pos_compared,
            pos.left_out_of_stock + pos.left_no_rate as pos_left_out, pos.lowest::text as pos_lowest,
            pos.average::text as pos_average, pos.highest::text as pos_highest, pos.cheapest_id as pos_cheapest_id,
            pos.rank as pos_rank, pos.price_index::text as pos_price_index`;

export interface PositionColumns {
  pos_own_price: string | null;
  pos_own_observed: boolean;
  pos_compared: number;
  pos_left_out: number;
  pos_lowest: string | null;
  pos_average: string | null;
  pos_highest: string | null;
  pos_cheapest_id: string | null;
  pos_rank: number | null;
  pos_price_index: string | null;
}

const num = (v: string | null) => (v === null ? null : Number(v));

/** The compact position of a product row; a row without the columns (just inserted) has no series yet. */
export function toPosition(r: { base_price: string } & Partial<PositionColumns>): ProductPosition {
  if (r.pos_compared === undefined) {
    return { own_price: Number(r.base_price), own_price_source: 'base_price', competitors_compared: 0, competitors_left_out: 0, rank: null, price_index: null };
  }
  return {
    own_price: num(r.pos_own_price ?? null),
    own_price_source: r.pos_own_observed ? 'observation' : 'base_price',
    competitors_compared: Number(r.pos_compared),
    competitors_left_out: Number(r.pos_left_out ?? 0),
    rank: r.pos_rank ?? null,
    price_index: num(r.pos_price_index ?? null),
  };
}
