import type { Queryable } from '../../db/types.js';
import { iso } from '../../http/fields.js';
import type { Changes, SeriesStats, Trends } from './schemas.js';
import { PERIODS, type Period, queryTrends, RANGES, type TrendsRow } from './sql.js';

/** Turns the rows of the trends statement into the answer (docs/prices/TRENDS.md). */

const num = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));
/** Epoch seconds (decimal text, milliseconds at most) -> RFC 3339. */
const fromEpoch = (seconds: string) => new Date(Math.round(Number(seconds) * 1000)).toISOString();

/** `[price, ±epoch]` from min/max over arrays -> `{price, at}`. */
function priceAt(pair: string[] | null, negated: boolean) {
  if (!pair || pair.length < 2) return null;
  const t = negated ? String(-Number(pair[1])) : pair[1]!;
  return { price: Number(pair[0]), at: fromEpoch(t) };
}

function changes(r: TrendsRow): Changes {
  const out = {} as NonNullable<Changes>;
  for (const p of Object.keys(PERIODS) as Period[]) {
    out[p] = {
      from: num(r[`p${p}_price`]),
      from_currency: r[`p${p}_currency`] ?? null,
      amount: num(r[`p${p}_amount`]),
      percent: num(r[`p${p}_percent`]),
    };
  }
  return out;
}

function stats(r: TrendsRow): SeriesStats {
  const current = Number(r.latest_price);
  const ranges: Record<string, unknown> = {};
  for (const d of RANGES) {
    const lowest = priceAt(r[`low_${d}`] ?? null, true);
    ranges[`${d}d`] = {
      average: num(r[`avg_${d}`]),
      lowest,
      highest: priceAt(r[`high_${d}`] ?? null, false),
      current_is_lowest: r.latest_in_stock === false ? null : lowest !== null && current <= lowest.price,
      observations: Number(r[`n_${d}`]),
      out_of_stock_share: num(r[`oos_${d}`]),
    };
  }
  return {
    currency: r.latest_currency!,
    lowest_ever: priceAt(r.low_ever, true),
    highest_ever: priceAt(r.high_ever, false),
    ranges: ranges as NonNullable<SeriesStats>['ranges'],
  };
}

export async function getTrends(db: Queryable, accountId: string, productId: string): Promise<Trends | undefined> {
  const rows = await queryTrends(db, accountId, productId);
  const first = rows[0];
  if (!first) return undefined;
  const own = rows.find((r) => r.series === '');
  const competitors = rows.filter((r) => r.competitor_id !== null);
  const cheapest = competitors.find((r) => r.competitor_id === first.cheapest_id);
  const since = (r: TrendsRow) => iso(r.price_since ?? r.first_observed_at ?? r.latest_observed_at!);
  return {
    object: 'product_trends',
    product_id: first.product_id,
    currency: first.product_currency,
    as_of: iso(first.as_of),
    own: own
      ? {
          source: 'observation',
          price: Number(own.latest_price),
          currency: own.latest_currency!,
          price_in_product_currency: num(own.converted),
          in_stock: own.latest_in_stock,
          observed_at: iso(own.latest_observed_at!),
          listing_id: own.latest_listing_id,
          price_since: since(own),
          changes: changes(own),
          stats: stats(own),
        }
      : {
          source: 'base_price',
          price: Number(first.base_price),
          currency: first.product_currency,
          price_in_product_currency: Number(first.base_price),
          in_stock: null,
          observed_at: null,
          listing_id: null,
          price_since: null,
          changes: null,
          stats: null,
        },
    comparison: {
      compared: first.compared,
      left_out: { out_of_stock: first.left_out_of_stock, no_rate: first.left_no_rate },
      lowest: num(first.lowest),
      average: num(first.average),
      highest: num(first.highest),
      rank: first.rank,
      price_index: num(first.price_index),
      cheapest:
        cheapest && cheapest.converted !== null
          ? {
              competitor_id: cheapest.competitor_id!,
              competitor_name: cheapest.competitor_name ?? '',
              price_in_product_currency: Number(cheapest.converted),
              tied: Math.max(0, first.cheapest_tied),
              since: iso(
                new Date(
                  Math.max(
                    Date.parse(since(cheapest)),
                    ...competitors
                      .filter((c) => c !== cheapest && c.cheaper_until)
                      .map((c) => c.cheaper_until!.getTime()),
                  ),
                ),
              ),
            }
          : null,
      stock: { in_stock: first.in_stock, out_of_stock: first.out_of_stock, unknown: first.stock_unknown },
    },
    competitors: competitors.map((r) => ({
      competitor_id: r.competitor_id!,
      competitor_name: r.competitor_name ?? '',
      price: Number(r.latest_price),
      currency: r.latest_currency!,
      in_stock: r.latest_in_stock,
      observed_at: iso(r.latest_observed_at!),
      listing_id: r.latest_listing_id,
      price_in_product_currency: num(r.converted),
      compared: r.latest_in_stock === false ? 'out_of_stock' : r.converted === null ? 'no_rate' : 'yes',
      price_since: since(r),
      changes: changes(r),
      stats: stats(r),
    })),
  };
}
