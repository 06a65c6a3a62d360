import type { ProductPosition } from './schemas.js';

/**
 * A product's price position (docs/prices/TRENDS.md, "Position"; docs/POSITIONS.md): where our
 * price stands among the competitors' latest prices. Defined once, as the SQL function
 * `ph_position` (migrations/0012_product_positions.sql), which both the live reads here and the
 * stored rows of product_positions (GET /positions, kept by triggers in the transaction of every
 * change of an input) run; `GET /products/{id}` (`monitoring.position`), `/products.csv`,
 * `GET /products/{id}/trends` and the alert engine read it through `positionSql`.
 *
 * - Each series of the product (price_series: one per competitor, and ours) counts with its
 *   latest price converted into the product's currency with the account's rates (src/money:
 *   the rule of `rateJoin` + `convertedSql`, written out in the function).
 * - Compared: a competitor whose latest offer is in stock or of unknown stock and whose price
 *   converts. Left out: out of stock, or no rate.
 * - Our price: our own series' latest (null when it does not convert), else base_price.
 * - Rank: 1 + the compared competitors strictly cheaper than us; price index: our price over the
 *   compared average x 100.
 *
 * One probe of price_series_key per product and two of the exchange_rates key per series in
 * another currency.
 */

/**
 * The position of the product in table alias `p` (which must have id, account_id, currency and
 * base_price), as a lateral subquery: `from products p cross join lateral ${positionSql('p')} pos`.
 * One row, whatever the product has. The product's values are passed in (not read again from
 * products), so a statement that has just updated the product sees its new price. Its columns:
 *
 * own_observed, own_price, compared, left_out_of_stock, left_no_rate, in_stock, out_of_stock,
 * stock_unknown (competitors by the stock of their latest), lowest, average, highest,
 * cheapest_id, cheapest_tied (other compared competitors at the lowest price), rank, price_index,
 * undercut_ids (the compared competitors strictly cheaper than us, cheapest first).
 */
export function positionSql(p: string): string {
  return `(select * from ph_position(${p}.id, ${p}.account_id, ${p}.currency, ${p}.base_price))`;
}

/** The position's columns as products read them, beside a product row: `pos_<column>`. */
export const POSITION_COLUMNS = `pos.own_price::text as pos_own_price, pos.own_observed as pos_own_observed, pos.compared as pos_compared,
            pos.left_out_of_stock + pos.left_no_rate as pos_left_out, pos.lowest::text as pos_lowest,
            pos.average::text as pos_average, pos.highest::text as pos_highest, pos.cheapest_id as pos_cheapest_id,
            pos.rank as pos_rank, pos.price_index::text as pos_price_index,
            (select c.name from competitors c where c.id = pos.cheapest_id) as pos_cheapest_name`;

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
    return {
      own_price: Number(r.base_price),
      own_price_source: 'base_price',
      competitors_compared: 0,
      competitors_left_out: 0,
      rank: null,
      price_index: null,
      cheapest: null,
    };
  }
  return {
    own_price: num(r.pos_own_price ?? null),
    own_price_source: r.pos_own_observed ? 'observation' : 'base_price',
    competitors_compared: Number(r.pos_compared),
    competitors_left_out: Number(r.pos_left_out ?? 0),
    rank: r.pos_rank ?? null,
    price_index: num(r.pos_price_index ?? null),
    cheapest:
      r.pos_cheapest_id && r.pos_lowest !== null && r.pos_lowest !== undefined
        ? { competitor_id: r.pos_cheapest_id, name: r.pos_cheapest_name ?? '', price: Number(r.pos_lowest) }
        : null,
  };
}
