import type { Database } from '../../db/types.js';
import { atomicBatchError, invalidItem, invalidItems, type ItemResult } from '../../batches/batch.js';
import type { ErrorDetail } from '../../http/errors.js';
import { afterObservations } from '../observed.js';
import { lockSeries } from '../series-lock.js';
import {
  EARLIEST_OBSERVED_AT,
  FUTURE_TOLERANCE_MS,
  type ObservationCreate,
  ObservationCreateSchema,
} from './schemas.js';
import {
  insertObservations,
  lockReferences,
  type NewObservation,
  type ObservationRow,
  type References,
} from './sql.js';

export type IngestItemResult = ItemResult<ObservationRow>;

const BATCH_WORDS = { resources: 'observations', nothing: 'nothing was recorded' };

const EARLIEST_MS = Date.parse(EARLIEST_OBSERVED_AT);

/** What the schema cannot say about observed_at: a real instant, not before 2000, not in the future. */
function observedAtProblem(text: string, nowMs: number): string | undefined {
  const t = Date.parse(text);
  // RFC 3339 allows a leap second (23:59:60), which no clock here can name.
  if (!Number.isFinite(t)) return 'must be an instant that exists (no leap seconds)';
  if (t < EARLIEST_MS) return 'must not be before the year 2000';
  if (t > nowMs + FUTURE_TOLERANCE_MS) return 'must not be more than 5 minutes in the future';
  return undefined;
}

/**
 * The instant observed_at names, as price_observations keeps it (timestamptz(3): microseconds
 * rounded half up to the millisecond, as PostgreSQL does), in ms. Observations are inserted in
 * this order (src/prices/series-lock.ts), so it must be the order the database sees.
 */
export function storedInstant(text: string): number {
  const m = /^(.*[Tt ]\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(text);
  if (!m) return Date.parse(text);
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  // PostgreSQL reads the fraction to the microsecond (rint: half to even), then rounds to the millisecond half up.
  const micros = m[2] === undefined ? 0 : roundHalfEven(Number(`0.${m[2]}`) * 1e6);
  return seconds + Math.floor((micros + 500) / 1000);
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * An item whose ids are all in the account, as the row to insert; or its failure: 404 for an id
 * that is not in the account (never existed, deleted, or another account's: the same answer),
 * 422 for a listing that does not belong to the product or competitor sent with it.
 */
function resolve(
  index: number,
  item: ObservationCreate,
  refs: References,
  observedAt: string,
): IngestItemResult | NewObservation {
  const missing: ErrorDetail[] = [];
  if (!refs.products.has(item.product_id))
    missing.push({ field: 'product_id', message: 'is not a product of this account' });
  if (item.competitor_id && !refs.competitors.has(item.competitor_id)) {
    missing.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
  }
  const listing = item.listing_id ? refs.listings.get(item.listing_id) : undefined;
  if (item.listing_id && !listing) missing.push({ field: 'listing_id', message: 'is not a listing of this account' });
  if (missing.length > 0) {
    const what = missing.length === 1 ? missing[0]!.field.replace('_id', '') : 'reference';
    return {
      index,
      status: 404,
      code: 'not_found',
      error: `The item names a ${what} that is not in this account`,
      details: missing,
    };
  }
  let competitorId = item.competitor_id ?? null;
  if (listing) {
    const mismatch: ErrorDetail[] = [];
    if (listing.product_id !== item.product_id)
      mismatch.push({ field: 'listing_id', message: 'is a listing of another product' });
    if (item.competitor_id === undefined) competitorId = listing.competitor_id;
    else if (listing.competitor_id !== competitorId) {
      mismatch.push({
        field: 'competitor_id',
        message: listing.competitor_id
          ? `does not match the listing's competitor ${listing.competitor_id}`
          : "must be null or left out: the listing is our own shop's page",
      });
    }
    if (mismatch.length > 0) return invalidItem(index, mismatch);
  }
  return {
    product_id: item.product_id,
    competitor_id: competitorId,
    listing_id: item.listing_id ?? null,
    price: String(item.price),
    currency: item.currency.toUpperCase(),
    in_stock: item.in_stock ?? null,
    observed_at: observedAt,
  };
}

/**
 * Records a batch of observations (POST /prices): each item validated on its own, the ids of all
 * items checked in one statement, every valid item inserted in one more, both in one short
 * transaction. With `atomic`, any failure records nothing and throws one 422 listing every
 * failed item's problems.
 */
export async function ingestObservations(
  db: Database,
  accountId: string,
  items: unknown[],
  atomic: boolean,
  now: Date,
  opts: { alertInlineMax?: number } = {},
): Promise<IngestItemResult[]> {
  const invalid = invalidItems(items, ObservationCreateSchema);
  const results: IngestItemResult[] = [];
  const candidates: { index: number; item: ObservationCreate; observedAt: string }[] = [];
  const nowMs = now.getTime();
  items.forEach((raw, index) => {
    const details = invalid.get(index);
    if (details) return results.push(invalidItem(index, details));
    const item = raw as ObservationCreate;
    const problem = item.observed_at === undefined ? undefined : observedAtProblem(item.observed_at, nowMs);
    if (problem) return results.push(invalidItem(index, [{ field: 'observed_at', message: problem }]));
    candidates.push({
      index,
      item,
      observedAt: new Date(item.observed_at === undefined ? nowMs : storedInstant(item.observed_at)).toISOString(),
    });
  });
  if (candidates.length === 0) {
    if (atomic) throw atomicBatchError(results, 'observations', BATCH_WORDS);
    return results;
  }

  const ids = { products: new Set<string>(), competitors: new Set<string>(), listings: new Set<string>() };
  for (const { item } of candidates) {
    ids.products.add(item.product_id);
    if (item.competitor_id) ids.competitors.add(item.competitor_id);
    if (item.listing_id) ids.listings.add(item.listing_id);
  }
  await db.transaction(async (tx) => {
    const refs = await lockReferences(tx, accountId, {
      products: [...ids.products],
      competitors: [...ids.competitors],
      listings: [...ids.listings],
    });
    const toInsert: { index: number; row: NewObservation }[] = [];
    for (const { index, item, observedAt } of candidates) {
      const r = resolve(index, item, refs, observedAt);
      if ('status' in r) results.push(r);
      else toInsert.push({ index, row: r });
    }
    // Thrown inside the transaction, so it rolls back (though nothing was written yet).
    if (atomic && results.length > 0) throw atomicBatchError(results, 'observations', BATCH_WORDS);
    // Each series locked, then its observations inserted in time order (series-lock.ts).
    await lockSeries(
      tx,
      accountId,
      toInsert.map((t) => t.row),
    );
    toInsert.sort((a, b) => Date.parse(a.row.observed_at) - Date.parse(b.row.observed_at));
    const rows = await insertObservations(
      tx,
      accountId,
      toInsert.map((t) => t.row),
    );
    toInsert.forEach(({ index, row }, i) => {
      const got = rows[i];
      if (!got || got.product_id !== row.product_id || got.competitor_id !== row.competitor_id) {
        throw new Error(`insertObservations returned rows out of order at ${i}`);
      }
      results.push({ index, status: 201, row: got });
    });
    await afterObservations(
      tx,
      accountId,
      rows.map((r) => Number(r.id)),
      opts,
    );
  });
  return results;
}
