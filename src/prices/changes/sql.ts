import type { Queryable } from '../../db/types.js';
import { accountWhere } from '../../db/where.js';
import { iso } from '../../http/fields.js';
import { type PageRequest, pageSql } from '../../lists/page.js';
import type { SortKey } from '../../lists/sort.js';
import { observationId } from '../ingest/sql.js';
import type { PriceChange } from './schemas.js';

/** Reading price_changes (written by the trigger of migrations/0003_prices.sql, never here). */

export interface PriceChangeRow {
  id: number;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  observation_id: number;
  old_price: string;
  old_currency: string;
  old_in_stock: boolean | null;
  old_observed_at: Date;
  new_price: string;
  new_currency: string;
  new_in_stock: boolean | null;
  observed_at: Date;
  source: string;
  sequence: number;
  created_at: Date;
  change_amount: string | null;
  change_percent: string | null;
}

export const changeId = (id: number | string) => `pchg_${id}`;

export function toPriceChange(r: PriceChangeRow): PriceChange {
  return {
    id: changeId(r.id),
    object: 'price_change',
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    observation_id: observationId(r.observation_id),
    old: { price: Number(r.old_price), currency: r.old_currency, in_stock: r.old_in_stock, observed_at: iso(r.old_observed_at) },
    new: { price: Number(r.new_price), currency: r.new_currency, in_stock: r.new_in_stock, observed_at: iso(r.observed_at) },
    change:
      r.change_amount === null ? null : { amount: Number(r.change_amount), percent: r.change_percent === null ? null : Number(r.change_percent) },
    source: r.source as PriceChange['source'],
    sequence: Number(r.sequence),
    created_at: iso(r.created_at),
  };
}

export interface ChangeFilter {
  product_id?: string | undefined;
  /** A competitor's id, or null for our own prices. */
  competitor_id?: string | null | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** Changes have one order, newest first by id (which only grows): the cursor holds the last id's digits. */
export const CHANGE_SORTS = {
  id: {
    expr: 'id',
    cast: '::bigint',
    value: (r) => String(r.id),
    accepts: (v) => typeof v === 'string' && /^[1-9][0-9]{0,17}$/.test(v),
    tiebreak: { expr: null, cast: '', of: (r) => changeId(r.id), accepts: () => true },
  },
} satisfies Record<string, SortKey<PriceChangeRow>>;

/**
 * A change's columns as toPriceChange reads them. The amount and the percentage are computed in
 * numeric, so they are exact (the percentage rounded half away from zero to 2 places); both are
 * null when the currency changed.
 */
const CHANGE_COLUMNS = `id, product_id, competitor_id, listing_id, observation_id, old_price, old_currency, old_in_stock, old_observed_at,
            new_price, new_currency, new_in_stock, observed_at, source, sequence, created_at,
            case when old_currency = new_currency then new_price - old_price end as change_amount,
            case when old_currency = new_currency and old_price <> 0
                 then round((new_price - old_price) * 100 / old_price, 2) end as change_percent`;

/**
 * The changes that the observations `observationIds` made (at most one each), in the order the
 * series saw them: for their price.changed and stock.changed events.
 */
export async function changesOfObservations(db: Queryable, accountId: string, observationIds: readonly number[]): Promise<PriceChangeRow[]> {
  const r = await db.query<PriceChangeRow>(
    `/* changesOfObservations */
     select ${CHANGE_COLUMNS} from price_changes
      where observation_id = any($2::bigint[]) and account_id = $1
      order by id`,
    [accountId, observationIds],
  );
  return r.rows;
}

/**
 * A page of the account's changes, newest first (by id, which only grows).
 */
export async function listPriceChanges(db: Queryable, accountId: string, f: ChangeFilter, page: PageRequest<PriceChangeRow>): Promise<PriceChangeRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.product_id !== undefined) add((p) => `product_id = ${p}`, f.product_id);
  if (f.competitor_id === null) where.push('competitor_id is null');
  else if (f.competitor_id !== undefined) add((p) => `competitor_id = ${p}`, f.competitor_id);
  if (f.since !== undefined) add((p) => `observed_at >= ${p}::timestamptz`, f.since);
  if (f.until !== undefined) add((p) => `observed_at < ${p}::timestamptz`, f.until);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<PriceChangeRow>(
    `/* listPriceChanges */
     select ${CHANGE_COLUMNS}
       from price_changes
      where ${where.join(' and ')}
      order by ${keyset.orderBy}
      limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}
