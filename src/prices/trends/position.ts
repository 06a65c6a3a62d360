import { converted, rateJoin } from './currency.js';
import type { ProductPosition } from './schemas.js';

/**
 * A product's position from the latest price of each of its series (price_series) and the
 * account's exchange rates, as SQL to put beside a product row `p` in the same statement (the
 * product resource's `monitoring.position` and the catalogue CSV). The same definitions as the
 * comparison of GET /products/{id}/trends (docs/prices/TRENDS.md, "Position"): competitors in
 * stock or of unknown stock whose price converts are compared; ours is our own series' latest,
 * else base_price. One probe of price_series_key per product and two of the exchange_rates key
 * per series in another currency.
 */
export const POSITION_SQL = {
  columns: `pos.own_price::text as pos_own_price, pos.own_observed as pos_own_observed, pos.compared as pos_compared,
            pos.left_out as pos_left_out, pos.lowest::text as pos_lowest, pos.average::text as pos_average,
            pos.highest::text as pos_highest, pos.cheapest_id as pos_cheapest_id,
            (select c.name from competitors c where c.id = pos.cheapest_id) as pos_cheapest_name,
            pos.rank as pos_rank, pos.price_index::text as pos_price_index`,
  joins: `cross join lateral (
            select coalesce(bool_or(own), false) as own_observed,
                   case when coalesce(bool_or(own), false) then max(conv) filter (where own) else p.base_price end as own_price,
                   count(*) filter (where cmp)::int as compared,
                   count(*) filter (where not own and not cmp)::int as left_out,
                   min(conv) filter (where cmp) as lowest,
                   round(avg(conv) filter (where cmp), 4) as average,
                   max(conv) filter (where cmp) as highest,
                   (array_agg(competitor_id order by conv, competitor_id) filter (where cmp))[1] as cheapest_id,
                   case when count(*) filter (where cmp) > 0 and (not coalesce(bool_or(own), false) or max(conv) filter (where own) is not null)
                        then 1 + count(*) filter (where cmp and conv < coalesce(own_conv, p.base_price)) end::int as rank,
                   round(case when coalesce(bool_or(own), false) then max(conv) filter (where own) else p.base_price end
                         / nullif(avg(conv) filter (where cmp), 0) * 100, 2) as price_index
              from (
                select s.competitor_id, s.competitor_id is null as own, v.conv,
                       s.competitor_id is not null and s.latest_in_stock is not false and v.conv is not null as cmp,
                       max(v.conv) filter (where s.competitor_id is null) over () as own_conv
                  from price_series s
                  ${rateJoin('fx', 'p.account_id', 's.latest_currency', 'p.currency')}
                  cross join lateral (select ${converted('s.latest_price', 'fx', 's.latest_currency', 'p.currency')} as conv) v
                 where s.product_id = p.id and s.latest_observed_at is not null
              ) s
          ) pos`,
};

export interface PositionColumns {
  pos_own_price: string | null;
  pos_own_observed: boolean;
  pos_compared: number;
  pos_left_out: number;
  pos_lowest: string | null;
  pos_average: string | null;
  pos_highest: string | null;
  pos_cheapest_id: string | null;
  pos_cheapest_name: string | null;
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
