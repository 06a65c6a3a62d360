import type { Queryable } from '../../db/types.js';
import { accountWhere } from '../../db/where.js';
import { iso } from '../../http/fields.js';
import { internalId, publicId } from '../../ids.js';
import { type PageRequest, pageSql } from '../../pagination/page.js';
import type { SortKey } from '../../pagination/sort.js';
import { observationId } from '../ingest/sql.js';
import type { ChangeKind, ChangeSeries, PriceChange } from './schemas.js';

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

export const changeId = (id: number | string) => publicId('pchg', id);

export function toPriceChange(r: PriceChangeRow): PriceChange {
  return {
    id: changeId(r.id),
    object: 'price_change',
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    observation_id: observationId(r.observation_id),
    old: {
      price: Number(r.old_price),
      currency: r.old_currency,
      in_stock: r.old_in_stock,
      observed_at: iso(r.old_observed_at),
    },
    new: {
      price: Number(r.new_price),
      currency: r.new_currency,
      in_stock: r.new_in_stock,
      observed_at: iso(r.observed_at),
    },
    change:
      r.change_amount === null
        ? null
        : { amount: Number(r.change_amount), percent: r.change_percent === null ? null : Number(r.change_percent) },
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
  kind?: ChangeKind | undefined;
  series?: ChangeSeries | undefined;
}

/** `series=` as a condition on a row with a `competitor_id` (price_changes, price_series). */
export const SERIES_SQL: Record<ChangeSeries, string> = {
  own: 'competitor_id is null',
  competitors: 'competitor_id is not null',
};

/**
 * Each kind as a condition on a price_changes row. The summary counts with the same text, so a
 * tile's number and the list it links to cannot disagree.
 */
export const KIND_SQL: Record<ChangeKind, string> = {
  up: 'old_currency = new_currency and new_price > old_price',
  down: 'old_currency = new_currency and new_price < old_price',
  moved: 'old_currency = new_currency and new_price <> old_price',
  back_in_stock: 'new_in_stock is true and old_in_stock is distinct from true',
  out_of_stock: 'new_in_stock is false and old_in_stock is distinct from false',
};

/** Changes have one order, newest first by id (which only grows): the cursor holds the last change's public id. */
export const CHANGE_SORTS = {
  id: {
    expr: 'id',
    cast: '::bigint',
    value: (r) => changeId(r.id),
    accepts: (v) => internalId('pchg', v) !== null,
    param: (v) => internalId('pchg', v),
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
export async function changesOfObservations(
  db: Queryable,
  accountId: string,
  observationIds: readonly number[],
): Promise<PriceChangeRow[]> {
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
export async function listPriceChanges(
  db: Queryable,
  accountId: string,
  f: ChangeFilter,
  page: PageRequest<PriceChangeRow>,
): Promise<PriceChangeRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.product_id !== undefined) add((p) => `product_id = ${p}`, f.product_id);
  if (f.competitor_id === null) where.push('competitor_id is null');
  else if (f.competitor_id !== undefined) add((p) => `competitor_id = ${p}`, f.competitor_id);
  if (f.since !== undefined) add((p) => `observed_at >= ${p}::timestamptz`, f.since);
  if (f.until !== undefined) add((p) => `observed_at < ${p}::timestamptz`, f.until);
  if (f.kind !== undefined) where.push(`(${KIND_SQL[f.kind]})`);
  if (f.series !== undefined) where.push(SERIES_SQL[f.series]);
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

export interface SummaryRow {
  until: Date;
  changes: string;
  up: string;
  down: string;
  back_in_stock: string;
  out_of_stock: string;
  average_percent: string | null;
  series_observed: string;
  series_unchanged: string;
}

/**
 * The account's changes observed since `since`, counted by kind (KIND_SQL), and its series
 * observed since then with and without a price change, in one statement. Changes are read
 * through each product's `price_changes_product (product_id, observed_at)` index, so only the
 * period's rows are touched however long the history; series through `price_series_account`.
 * A series was observed since `since` exactly when its latest observation is at or after it.
 */
export async function summarizePriceChanges(
  db: Queryable,
  accountId: string,
  since: string,
  series?: ChangeSeries,
): Promise<SummaryRow> {
  // A fixed text per `series` (never a value), so the statement stays one of three.
  const c = series === undefined ? '' : ` and c.${SERIES_SQL[series]}`;
  const s = series === undefined ? '' : ` and s.${SERIES_SQL[series]}`;
  const r = await db.query<SummaryRow>(
    `/* summarizePriceChanges */
     with c as (
       select c.*
         from products p
         join price_changes c on c.product_id = p.id and c.observed_at >= $2::timestamptz${c}
        where p.account_id = $1
     ), moved as (
       select distinct product_id, competitor_id from c where old_currency <> new_currency or old_price <> new_price
     ), observed as (
       select s.product_id, s.competitor_id
         from price_series s
        where s.account_id = $1 and s.latest_observed_at >= $2::timestamptz${s}
     )
     select now() as until,
            (select count(*) from c) as changes,
            (select count(*) from c where ${KIND_SQL.up}) as up,
            (select count(*) from c where ${KIND_SQL.down}) as down,
            (select count(*) from c where ${KIND_SQL.back_in_stock}) as back_in_stock,
            (select count(*) from c where ${KIND_SQL.out_of_stock}) as out_of_stock,
            (select round(avg(round((new_price - old_price) * 100 / old_price, 2)), 2)
               from c where ${KIND_SQL.moved} and old_price <> 0) as average_percent,
            (select count(*) from observed) as series_observed,
            (select count(*) from observed o
              where not exists (select 1 from moved m
                                 where m.product_id = o.product_id and m.competitor_id is not distinct from o.competitor_id)) as series_unchanged`,
    [accountId, since],
  );
  return r.rows[0]!;
}
