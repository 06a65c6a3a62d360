import type { Queryable } from '../db/types.js';
import { iso } from '../http/fields.js';
import { pageOf, pageRequest } from '../pagination/page.js';
import {
  checkPositionFilters,
  POSITION_DEFAULT_SORT,
  PRICE_INDEX_BOUNDS,
  type Position,
  type PositionListQuery,
  type PositionSummary,
  type PositionSummaryQuery,
} from './schemas.js';
import { listPositions, POSITION_SORTS, type PositionRow, summarizePositions } from './sql.js';

/** GET /positions and /positions/summary over the stored positions (docs/POSITIONS.md). */

export function toPosition(r: PositionRow): Position {
  return {
    product_id: r.product_id,
    name: r.name,
    sku: r.sku,
    own_price: Number(r.own_price),
    currency: r.currency,
    rank: Number(r.rank),
    of: Number(r.compared) + 1,
    price_index: r.price_index === null ? null : Number(r.price_index),
    cheapest: { competitor_id: r.cheapest_id, name: r.cheapest_name ?? '', price: Number(r.lowest) },
    gap_amount: Number(r.gap_amount),
    gap_percent: r.gap_percent === null ? null : Number(r.gap_percent),
    undercut_by: Number(r.undercut_by),
    changed_at: iso(r.changed_at),
  };
}

export async function positionsPage(db: Queryable, accountId: string, q: PositionListQuery) {
  checkPositionFilters(q);
  const page = pageRequest(q, POSITION_SORTS, POSITION_DEFAULT_SORT);
  return pageOf(await listPositions(db, accountId, q, page), page, toPosition);
}

export async function positionsSummary(
  db: Queryable,
  accountId: string,
  q: PositionSummaryQuery,
): Promise<PositionSummary> {
  const r = await summarizePositions(db, accountId, q);
  const bounds: (number | null)[] = [null, ...PRICE_INDEX_BOUNDS, null];
  return {
    object: 'position_summary',
    products: r.products,
    cheapest: r.cheapest,
    in_between: r.in_between,
    dearest: r.dearest,
    alone: r.alone,
    undercut: r.undercut,
    price_index_histogram: r.buckets.map((count, i) => ({ from: bounds[i]!, to: bounds[i + 1]!, count })),
  };
}
