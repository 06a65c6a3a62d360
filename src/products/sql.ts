import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { containsPattern } from '../pagination/filters.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { numericKey, type SortKey, textKey, timestampKey } from '../pagination/sort.js';
import { POSITION_COLUMNS, type PositionColumns, positionSql, toPosition } from '../position/sql.js';
import type { Product, PRODUCT_SORT_FIELDS } from './schemas.js';

/** Every product query of the API, as parameterised SQL, always scoped by account. */

export interface ProductRow {
  id: string;
  account_id: string;
  name: string;
  brand: string | null;
  sku: string | null;
  category: string | null;
  description: string | null;
  base_price: string;
  currency: string;
  url: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The monitoring summary (MONITORING_SQL) beside a product's columns. Absent on rows that come
 * straight from an INSERT: a product that did not exist a moment ago has no listings.
 */
export interface MonitoringColumns extends PositionColumns {
  listing_count: number;
  last_checked_at: Date | null;
  lowest_price: string | null;
  lowest_currency: string | null;
  lowest_competitor_id: string | null;
  lowest_listing_id: string | null;
  lowest_observed_at: Date | null;
}

export const PRODUCT_COLUMNS =
  'id, account_id, name, brand, sku, category, description, base_price, currency, url, created_at, updated_at';

const qualified = (alias: string) =>
  PRODUCT_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/**
 * The monitoring summary of the product in `p`, in the same statement as the product: two index
 * probes of listings_product per product (so lists add no query per row). The lowest competitor
 * price is the lowest latest price of an enabled competitor listing in the product's own
 * currency (never converted) whose offer was not last seen out of stock. The position compares
 * the latest price of each of its series, converted with the account's rates (src/position).
 */
const MONITORING_SQL = {
  columns: `m.listing_count, m.last_checked_at, lo.last_price as lowest_price, lo.last_currency as lowest_currency,
            lo.competitor_id as lowest_competitor_id, lo.listing_id as lowest_listing_id, lo.last_success_at as lowest_observed_at,
            ${POSITION_COLUMNS}`,
  joins: `cross join lateral (
            select count(*)::int as listing_count, max(l.last_checked_at) as last_checked_at
              from listings l where l.product_id = p.id
          ) m
          left join lateral (
            select l.last_price, l.last_currency, l.competitor_id, l.id as listing_id, l.last_success_at
              from listings l
             where l.product_id = p.id and l.competitor_id is not null and l.enabled and l.last_price is not null
               and l.last_currency = p.currency and l.in_stock is not false
             order by l.last_price, l.id
             limit 1
          ) lo on true
          cross join lateral ${positionSql('p')} pos`,
};

export function toProduct(r: ProductRow & Partial<MonitoringColumns>): Product {
  const lowest =
    r.lowest_price !== null &&
    r.lowest_price !== undefined &&
    r.lowest_competitor_id &&
    r.lowest_listing_id &&
    r.lowest_currency
      ? {
          price: Number(r.lowest_price),
          currency: r.lowest_currency,
          competitor_id: r.lowest_competitor_id,
          listing_id: r.lowest_listing_id,
          observed_at: r.lowest_observed_at ? iso(r.lowest_observed_at) : null,
        }
      : null;
  return {
    id: r.id,
    object: 'product',
    name: r.name,
    brand: r.brand,
    sku: r.sku,
    category: r.category,
    description: r.description,
    base_price: Number(r.base_price),
    currency: r.currency,
    url: r.url,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    monitoring: {
      listing_count: Number(r.listing_count ?? 0),
      lowest_competitor_price: lowest,
      last_checked_at: r.last_checked_at ? iso(r.last_checked_at) : null,
      position: toPosition(r),
    },
  };
}

export interface NewProduct {
  id: string;
  name: string;
  brand: string | null;
  sku: string | null;
  category: string | null;
  description: string | null;
  base_price: number;
  currency: string;
  url: string | null;
}

const NEW_COLUMNS = ['id', 'name', 'brand', 'sku', 'category', 'description', 'base_price', 'currency', 'url'] as const;

export async function insertProduct(db: Queryable, accountId: string, p: NewProduct): Promise<ProductRow> {
  const r = await db.query<ProductRow>(
    `/* insertProduct */ insert into products (account_id, ${NEW_COLUMNS.join(', ')})
     values ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10)
     returning ${PRODUCT_COLUMNS}`,
    [accountId, ...NEW_COLUMNS.map((c) => (c === 'base_price' ? String(p.base_price) : p[c]))],
  );
  return r.rows[0]!;
}

/**
 * Inserts many products in one statement. Rows whose SKU is taken (by an existing product) are
 * skipped; the caller compares the returned ids with what it sent.
 */
export async function insertProducts(db: Queryable, accountId: string, items: NewProduct[]): Promise<ProductRow[]> {
  if (items.length === 0) return [];
  const cols = NEW_COLUMNS.map((c) => items.map((p) => (c === 'base_price' ? String(p.base_price) : p[c])));
  const r = await db.query<ProductRow>(
    `/* insertProducts */ insert into products (account_id, ${NEW_COLUMNS.join(', ')})
     select $1, u.* from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                $8::numeric[], $9::text[], $10::text[])
       as u (${NEW_COLUMNS.join(', ')})
     on conflict (account_id, sku) do nothing
     returning ${PRODUCT_COLUMNS}`,
    [accountId, ...cols],
  );
  return r.rows;
}

/** The product with its monitoring summary, in one statement. */
/** GET /products/{id}'s one statement ($1 id, $2 account); bench/servers/minimal.ts runs it too. */
export const PRODUCT_BY_ID_SQL = `/* getProduct */ select ${qualified('p')}, ${MONITORING_SQL.columns}
       from products p ${MONITORING_SQL.joins}
      where p.id = $1 and p.account_id = $2`;

export async function getProduct(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<(ProductRow & MonitoringColumns) | undefined> {
  const r = await db.query<ProductRow & MonitoringColumns>(PRODUCT_BY_ID_SQL, [id, accountId]);
  return r.rows[0];
}

export async function findProductIdBySku(db: Queryable, accountId: string, sku: string): Promise<string | undefined> {
  const r = await db.query<{ id: string }>(
    '/* findProductIdBySku */ select id from products where account_id = $1 and sku = $2',
    [accountId, sku],
  );
  return r.rows[0]?.id;
}

const UPDATABLE = ['name', 'brand', 'sku', 'category', 'description', 'base_price', 'currency', 'url'] as const;
export type ProductChanges = Partial<Record<(typeof UPDATABLE)[number], string | number | null>>;

/** Sets only the given fields. undefined when the product is not in this account. */
export async function updateProduct(
  db: Queryable,
  accountId: string,
  id: string,
  changes: ProductChanges,
): Promise<(ProductRow & MonitoringColumns) | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id, accountId];
  for (const col of UPDATABLE) {
    if (!(col in changes) || changes[col] === undefined) continue;
    const v = changes[col];
    params.push(col === 'base_price' ? String(v) : v);
    sets.push(`${col} = $${params.length}${col === 'base_price' ? '::numeric' : ''}`);
  }
  if (sets.length === 0) return getProduct(db, accountId, id);
  const r = await db.query<ProductRow & MonitoringColumns>(
    // Strictly later than before even within one millisecond (timestamps keep 3 digits), so
    // clients syncing by updated_at never miss a change. The summary is read in the same
    // statement (against the new currency).
    `/* updateProduct */ with p as (
       update products set ${sets.join(', ')}, updated_at = greatest(now(), updated_at + interval '1 millisecond')
        where id = $1 and account_id = $2 returning ${PRODUCT_COLUMNS}
     )
     select ${qualified('p')}, ${MONITORING_SQL.columns} from p ${MONITORING_SQL.joins}`,
    params,
  );
  return r.rows[0];
}

/** The deleted product as it was (without its summary); undefined when it is not in this account. */
export async function deleteProduct(db: Queryable, accountId: string, id: string): Promise<ProductRow | undefined> {
  const r = await db.query<ProductRow>(
    `/* deleteProduct */ delete from products where id = $1 and account_id = $2 returning ${PRODUCT_COLUMNS}`,
    [id, accountId],
  );
  return r.rows[0];
}

/** The sort keys of GET /products and /products.csv; text sorts bytewise. */
export const PRODUCT_SORTS = {
  created_at: timestampKey('created_at', (r) => r.created_at),
  updated_at: timestampKey('updated_at', (r) => r.updated_at),
  base_price: numericKey('base_price', (r) => r.base_price),
  name: textKey('name', (r) => r.name),
  sku: textKey('sku', (r) => r.sku, true),
  brand: textKey('brand', (r) => r.brand, true),
  category: textKey('category', (r) => r.category, true),
} satisfies Record<(typeof PRODUCT_SORT_FIELDS)[number], SortKey<ProductRow>>;

export interface ListFilter {
  category?: string | undefined;
  brand?: string | undefined;
  sku?: string | undefined;
  currency?: string | undefined;
  min_price?: number | undefined;
  max_price?: number | undefined;
  q?: string | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

/**
 * A page of the account's products with their monitoring summaries.
 * `monitoring: false` leaves the summaries out (the product rows alone, for exports that only
 * walk the catalogue: their monitoring columns are then absent).
 */
export async function listProducts(
  db: Queryable,
  accountId: string,
  f: ListFilter,
  page: PageRequest<ProductRow>,
  opts: { monitoring?: boolean } = {},
): Promise<(ProductRow & MonitoringColumns)[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.category !== undefined) add((p) => `category = ${p}`, f.category);
  if (f.brand !== undefined) add((p) => `brand = ${p}`, f.brand);
  if (f.sku !== undefined) add((p) => `sku = ${p}`, f.sku);
  if (f.currency !== undefined) add((p) => `currency = ${p}`, f.currency.toUpperCase());
  if (f.min_price !== undefined) add((p) => `base_price >= ${p}::numeric`, String(f.min_price));
  if (f.max_price !== undefined) add((p) => `base_price <= ${p}::numeric`, String(f.max_price));
  if (f.created_after !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.created_after);
  if (f.created_before !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.created_before);
  if (f.q !== undefined) {
    add(
      (p) => `(name ilike ${p} or brand ilike ${p} or sku ilike ${p} or description ilike ${p})`,
      containsPattern(f.q),
    );
  }
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const monitoring =
    opts.monitoring === false
      ? { columns: '', joins: '' }
      : { columns: `, ${MONITORING_SQL.columns}`, joins: MONITORING_SQL.joins };
  // The page is cut first, so the summaries are computed for its rows only.
  const r = await db.query<ProductRow & MonitoringColumns>(
    `/* listProducts */
     select ${qualified('p')}${monitoring.columns} from (
       select ${PRODUCT_COLUMNS} from products
        where ${where.join(' and ')}
        order by ${keyset.orderBy}
        limit ${keyset.limit}
     ) p ${monitoring.joins}
     order by ${keyset.orderBy}`,
    params,
  );
  return r.rows;
}
