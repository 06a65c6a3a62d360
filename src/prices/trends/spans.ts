import type { Queryable } from '../../db/types.js';
import { DAY_MS } from '../../time.js';
import { EDGE_DAYS } from './sql.js';

/**
 * The spans of whole days the trends statement reads instead of its blocks and day rows
 * (migrations/0027_price_spans.sql, docs/prices/TRENDS.md "Spans"): a cache per product and UTC
 * midnight of the days between the statement's edge days, built here and dropped by the day
 * rows' triggers when a day in one changes. The statement reads the blocks and day rows of a
 * product without spans, so building is never needed for a right answer, only for a fast one.
 */

/** Products per transaction of a pass (~11 series and a year of day rows each): their ingestion waits for it. */
export const SPAN_BATCH_PRODUCTS = 4;

/** The UTC midnight starting the day of `at`. */
export const utcMidnight = (at: number): Date => new Date(Math.floor(at / DAY_MS) * DAY_MS);

/** Builds the spans of `productIds` for the UTC midnight `d1` that they lack; returns the span rows written. */
export async function buildPriceSpans(db: Queryable, productIds: readonly string[], d1: Date): Promise<number> {
  const r = await db.query<{ n: number }>(`/* buildPriceSpans */ select price_spans_build($1, $2, $3) as n`, [
    productIds,
    d1.toISOString(),
    EDGE_DAYS,
  ]);
  return Number(r.rows[0]!.n);
}

/** Statistics for the spans just built: planned from a fresh table's empty ones, the trends' probe of it could scan it. */
export async function analyzePriceSpans(db: Queryable): Promise<void> {
  await db.query(`/* analyzePriceSpans */ analyze price_spans`);
}
