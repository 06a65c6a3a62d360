import type { Queryable } from '../../db/types.js';
import { iso } from '../../http/fields.js';
import { publicId } from '../../ids.js';
import type { PriceObservation } from './schemas.js';

/**
 * The database side of POST /prices: one statement that checks (and holds) every id a batch
 * refers to, and one that inserts all its rows. The trigger of migrations/0003_prices.sql keeps
 * price_series and price_changes in the same statement. Each statement starts with a comment
 * naming it, which pg_stat_activity and pg_stat_statements show.
 */

export interface ObservationRow {
  id: number;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
  source: string;
  created_at: Date;
}

export const OBSERVATION_COLUMNS =
  'id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source, created_at';

export const observationId = (id: number | string) => publicId('obs', id);

export function toObservation(r: ObservationRow): PriceObservation {
  return {
    id: observationId(r.id),
    object: 'price_observation',
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    price: Number(r.price),
    currency: r.currency,
    in_stock: r.in_stock,
    observed_at: iso(r.observed_at),
    source: r.source as PriceObservation['source'],
    created_at: iso(r.created_at),
  };
}

/** What the account holds of the ids a batch refers to. */
export interface References {
  products: Set<string>;
  competitors: Set<string>;
  listings: Map<string, { product_id: string; competitor_id: string | null }>;
}

/**
 * The account's products, competitors and listings among the given ids, in one statement. Run
 * inside the insert's transaction: FOR KEY SHARE keeps them from being deleted until it commits
 * (what the foreign keys would take anyway), so a product deleted meanwhile cannot turn a
 * checked item into a foreign key violation.
 */
export async function lockReferences(
  db: Queryable,
  accountId: string,
  ids: { products: string[]; competitors: string[]; listings: string[] },
): Promise<References> {
  const r = await db.query<{
    kind: 'p' | 'c' | 'l';
    id: string;
    product_id: string | null;
    competitor_id: string | null;
  }>(
    `/* lockReferences */
     with p as (select id from products where account_id = $1 and id = any($2::text[]) for key share),
          c as (select id from competitors where account_id = $1 and id = any($3::text[]) for key share),
          l as (select id, product_id, competitor_id from listings where account_id = $1 and id = any($4::text[]) for key share)
     select 'p' as kind, id, null as product_id, null as competitor_id from p
     union all select 'c', id, null, null from c
     union all select 'l', id, product_id, competitor_id from l`,
    [accountId, ids.products, ids.competitors, ids.listings],
  );
  const refs: References = { products: new Set(), competitors: new Set(), listings: new Map() };
  for (const row of r.rows) {
    if (row.kind === 'p') refs.products.add(row.id);
    else if (row.kind === 'c') refs.competitors.add(row.id);
    else refs.listings.set(row.id, { product_id: row.product_id!, competitor_id: row.competitor_id });
  }
  return refs;
}

/** A row to insert: an observation's own fields, `price` as exact decimal text, `observed_at` as RFC 3339 text as sent (PostgreSQL reads the offset). */
export type NewObservation = Omit<ObservationRow, 'id' | 'observed_at' | 'source' | 'created_at'> & {
  observed_at: string;
};

/**
 * Inserts every row in one statement (a column array per field, unnested), so the trigger runs
 * once for the whole batch. RETURNING yields the rows in the order the SELECT produced them,
 * which is the arrays' order (PostgreSQL inserts serially; Django's and Prisma's bulk inserts
 * rely on the same): row i of the result is item i. The caller checks that anyway.
 */
export async function insertObservations(
  db: Queryable,
  accountId: string,
  rows: NewObservation[],
): Promise<ObservationRow[]> {
  if (rows.length === 0) return [];
  const r = await db.query<ObservationRow>(
    `/* insertObservations */
     insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source)
     select $1, u.product_id, u.competitor_id, u.listing_id, u.price, u.currency, u.in_stock, u.observed_at, 'api'
       from unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::boolean[], $8::timestamptz[])
         as u (product_id, competitor_id, listing_id, price, currency, in_stock, observed_at)
     returning ${OBSERVATION_COLUMNS}`,
    [
      accountId,
      rows.map((o) => o.product_id),
      rows.map((o) => o.competitor_id),
      rows.map((o) => o.listing_id),
      rows.map((o) => o.price),
      rows.map((o) => o.currency),
      rows.map((o) => o.in_stock),
      rows.map((o) => o.observed_at),
    ],
  );
  return r.rows;
}
