import type { Queryable } from '../db/types.js';
import { containsPattern } from '../pagination/filters.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, type Tiebreak, textKey, timestampKey } from '../pagination/sort.js';
import {
  PRICE_INDEX_BOUNDS,
  type POSITION_SORT_FIELDS,
  type PositionStanding,
  type PositionListQuery,
  type PositionSummaryQuery,
} from './schemas.js';

/**
 * The stored positions (product_positions, migrations/0012: one row per product, kept by
 * triggers with ph_position, the one definition src/position reads live). Lists show the ranked
 * rows only: those with a compared competitor and our price known.
 */

/**
 * Each standing as a condition on a stored row of product_positions (`pp`): the one definition
 * the summary counts with and the list's `standing` filter selects with.
 */
export const STANDING_SQL: Record<PositionStanding, string> = {
  cheapest: 'pp.rank = 1',
  in_between: 'pp.rank > 1 and pp.own_price < pp.highest',
  dearest: 'pp.rank > 1 and pp.own_price >= pp.highest',
};

export interface PositionRow {
  product_id: string;
  name: string;
  sku: string | null;
  currency: string;
  own_price: string;
  rank: number;
  compared: number;
  price_index: string | null;
  cheapest_id: string;
  cheapest_name: string | null;
  lowest: string;
  gap_amount: string;
  gap_percent: string | null;
  undercut_by: number;
  changed_at: Date;
}

const SIGNED = /^-?\d{1,30}(\.\d{1,4})?$/;

/** A numeric column that may be null, sorted with null as Infinity (an infinite gap, an index over a zero average). */
const signedKey = (column: string, read: (r: PositionRow) => string | null): SortKey<PositionRow> => ({
  expr: `coalesce(${column}, 'Infinity'::numeric)`,
  cast: '::numeric',
  value: (r) => read(r) ?? 'Infinity',
  accepts: (v) => typeof v === 'string' && (v === 'Infinity' || SIGNED.test(v)),
});

const byProduct: Tiebreak<PositionRow> = {
  expr: 'pp.product_id',
  cast: '::text',
  of: (r) => r.product_id,
  accepts: (id) => /^prod_[0-9A-Za-z]{1,59}$/.test(id),
};

const withTiebreak = (key: SortKey<PositionRow>): SortKey<PositionRow> => ({ ...key, tiebreak: byProduct });

/** Each sort is served by an index of product_positions on (account_id, key, product_id) where ranked (name: products_account_name). */
export const POSITION_SORTS = {
  gap_percent: withTiebreak(signedKey('pp.gap_percent', (r) => r.gap_percent)),
  gap_amount: withTiebreak({
    expr: 'pp.gap_amount',
    cast: '::numeric',
    value: (r) => r.gap_amount,
    accepts: (v) => typeof v === 'string' && SIGNED.test(v),
  }),
  rank: withTiebreak({
    expr: 'pp.rank',
    cast: '::int',
    value: (r) => r.rank,
    accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2_147_483_647,
  }),
  price_index: withTiebreak(signedKey('pp.price_index', (r) => r.price_index)),
  name: withTiebreak(textKey('p.name', (r) => r.name)),
  changed_at: withTiebreak(timestampKey('pp.changed_at', (r) => r.changed_at)),
} satisfies Record<(typeof POSITION_SORT_FIELDS)[number], SortKey<PositionRow>>;

/** A page of the account's ranked positions, filtered; one statement, an index scan for the gap sorts. */
export async function listPositions(
  db: Queryable,
  accountId: string,
  f: PositionListQuery,
  page: PageRequest<PositionRow>,
): Promise<PositionRow[]> {
  const params: unknown[] = [accountId];
  const where = ['pp.account_id = $1', 'p.account_id = $1', 'pp.rank is not null'];
  const push = (sql: (p: string) => string, v: unknown) => {
    params.push(v);
    where.push(sql(`$${params.length}`));
  };
  if (f.undercut !== undefined) where.push(f.undercut ? 'pp.rank > 1' : 'pp.rank = 1');
  if (f.standing !== undefined) where.push(`(${STANDING_SQL[f.standing as PositionStanding]})`);
  if (f.rank_min !== undefined) push((p) => `pp.rank >= ${p}::int`, f.rank_min);
  if (f.rank_max !== undefined) push((p) => `pp.rank <= ${p}::int`, f.rank_max);
  // The GIN index holds the undercut rows' competitors; another account's id matches nothing.
  if (f.competitor_id !== undefined) {
    where.push('pp.rank > 1');
    push((p) => `pp.undercut_ids @> array[${p}::text]`, f.competitor_id);
  }
  if (f.gap_percent_min !== undefined)
    push((p) => `coalesce(pp.gap_percent, 'Infinity'::numeric) >= ${p}::numeric`, String(f.gap_percent_min));
  if (f.gap_percent_max !== undefined)
    push((p) => `coalesce(pp.gap_percent, 'Infinity'::numeric) <= ${p}::numeric`, String(f.gap_percent_max));
  if (f.brand !== undefined) push((p) => `p.brand = ${p}`, f.brand);
  if (f.category !== undefined) push((p) => `p.category = ${p}`, f.category);
  if (f.q !== undefined) {
    push(
      (p) => `(p.name ilike ${p} or p.brand ilike ${p} or p.sku ilike ${p} or p.description ilike ${p})`,
      containsPattern(f.q),
    );
  }
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<PositionRow>(
    `/* listPositions */
     select pp.product_id, p.name, p.sku, pp.currency, pp.own_price::text as own_price, pp.rank, pp.compared,
            pp.price_index::text as price_index, pp.cheapest_id, c.name as cheapest_name, pp.lowest::text as lowest,
            pp.gap_amount::text as gap_amount, pp.gap_percent::text as gap_percent, pp.undercut_by, pp.changed_at
       from product_positions pp
       join products p on p.id = pp.product_id
       left join competitors c on c.id = pp.cheapest_id
      where ${where.join(' and ')}
      order by ${keyset.orderBy}
      limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

export interface SummaryRow {
  products: number;
  cheapest: number;
  in_between: number;
  dearest: number;
  alone: number;
  undercut: number;
  buckets: number[];
}

/** The counts of GET /positions/summary over the account's stored positions, in one statement. */
export async function summarizePositions(
  db: Queryable,
  accountId: string,
  f: PositionSummaryQuery,
): Promise<SummaryRow> {
  const params: unknown[] = [accountId, PRICE_INDEX_BOUNDS.map(String)];
  const where = ['pp.account_id = $1'];
  let join = '';
  if (f.brand !== undefined || f.category !== undefined) {
    join = 'join products p on p.id = pp.product_id';
    if (f.brand !== undefined) {
      params.push(f.brand);
      where.push(`p.brand = $${params.length}`);
    }
    if (f.category !== undefined) {
      params.push(f.category);
      where.push(`p.category = $${params.length}`);
    }
  }
  const buckets = PRICE_INDEX_BOUNDS.map((_, i) => i)
    .concat(PRICE_INDEX_BOUNDS.length)
    .map((i) => `count(*) filter (where pp.rank is not null and w.bucket = ${i})::int`)
    .join(', ');
  const r = await db.query<Omit<SummaryRow, 'buckets'> & { buckets: number[] | string }>(
    `/* summarizePositions */
     select count(*)::int as products,
            count(*) filter (where ${STANDING_SQL.cheapest})::int as cheapest,
            count(*) filter (where ${STANDING_SQL.in_between})::int as in_between,
            count(*) filter (where ${STANDING_SQL.dearest})::int as dearest,
            count(*) filter (where pp.rank is null)::int as alone,
            count(*) filter (where pp.rank > 1)::int as undercut,
            array[${buckets}] as buckets
       from product_positions pp ${join}
      cross join lateral (select width_bucket(coalesce(pp.price_index, 'Infinity'::numeric), $2::numeric[]) as bucket) w
      where ${where.join(' and ')}`,
    params,
  );
  const row = r.rows[0]!;
  const list =
    typeof row.buckets === 'string' ? row.buckets.slice(1, -1).split(',').map(Number) : row.buckets.map(Number);
  return { ...row, buckets: list };
}
