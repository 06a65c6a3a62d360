import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { containsPattern } from '../pagination/filters.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, textKey, timestampKey } from '../pagination/sort.js';
import type { Competitor, CompetitorAnalysis, COMPETITOR_SORT_FIELDS } from './schemas.js';
import { maskProxyUrl } from './urls.js';

/** Every competitor query of the API, as parameterised SQL, always scoped by account. */

export interface CompetitorRow {
  id: string;
  account_id: string;
  name: string;
  website: string;
  domain: string;
  notes: string | null;
  proxy_url: string | null;
  listing_count: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, account_id, name, website, domain, notes, proxy_url, created_at, updated_at';
/** The listing count of the competitor in `alias`, by the listings_competitor index. */
const listingCount = (alias: string) =>
  `(select count(*)::int from listings l where l.competitor_id = ${alias}.id) as listing_count`;

export function toCompetitor(r: CompetitorRow): Competitor {
  return {
    id: r.id,
    object: 'competitor',
    name: r.name,
    website: r.website,
    domain: r.domain,
    notes: r.notes,
    proxy_url: maskProxyUrl(r.proxy_url),
    listing_count: Number(r.listing_count),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export interface NewCompetitor {
  id: string;
  name: string;
  website: string;
  domain: string;
  notes: string | null;
  proxy_url: string | null;
}

export async function insertCompetitor(db: Queryable, accountId: string, c: NewCompetitor): Promise<CompetitorRow> {
  const r = await db.query<CompetitorRow>(
    `/* insertCompetitor */ insert into competitors (account_id, id, name, website, domain, notes, proxy_url)
     values ($1, $2, $3, $4, $5, $6, $7)
     returning ${COLUMNS}, 0 as listing_count`,
    [accountId, c.id, c.name, c.website, c.domain, c.notes, c.proxy_url],
  );
  return r.rows[0]!;
}

export async function getCompetitor(db: Queryable, accountId: string, id: string): Promise<CompetitorRow | undefined> {
  const r = await db.query<CompetitorRow>(
    `/* getCompetitor */ select ${COLUMNS}, ${listingCount('c')} from competitors c where id = $1 and account_id = $2`,
    [id, accountId],
  );
  return r.rows[0];
}

/** The stored (unmasked) proxy URL, locking the row until the transaction ends. */
export async function lockCompetitorProxy(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<{ proxy_url: string | null } | undefined> {
  const r = await db.query<{ proxy_url: string | null }>(
    '/* lockCompetitorProxy */ select proxy_url from competitors where id = $1 and account_id = $2 for update',
    [id, accountId],
  );
  return r.rows[0];
}

const UPDATABLE = ['name', 'website', 'domain', 'notes', 'proxy_url'] as const;
export type CompetitorChanges = Partial<Record<(typeof UPDATABLE)[number], string | null>>;

/** Sets only the given fields. undefined when the competitor is not in this account. */
export async function updateCompetitor(
  db: Queryable,
  accountId: string,
  id: string,
  changes: CompetitorChanges,
): Promise<CompetitorRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id, accountId];
  for (const col of UPDATABLE) {
    if (changes[col] === undefined) continue;
    params.push(changes[col]);
    sets.push(`${col} = $${params.length}`);
  }
  if (sets.length === 0) return getCompetitor(db, accountId, id);
  const r = await db.query<CompetitorRow>(
    // Strictly later than before, as for products (src/products/sql.ts).
    `/* updateCompetitor */ update competitors c set ${sets.join(', ')}, updated_at = greatest(now(), updated_at + interval '1 millisecond')
     where id = $1 and account_id = $2 returning ${COLUMNS}, ${listingCount('c')}`,
    params,
  );
  return r.rows[0];
}

/**
 * Listings and their observations go with it (foreign keys with on delete cascade). The deleted
 * competitor as it was, with the listings it had; undefined when it is not in this account.
 */
export async function deleteCompetitor(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<CompetitorRow | undefined> {
  const r = await db.query<CompetitorRow>(
    `/* deleteCompetitor */ delete from competitors c where id = $1 and account_id = $2 returning ${COLUMNS}, ${listingCount('c')}`,
    [id, accountId],
  );
  return r.rows[0];
}

/** The sort keys of GET /competitors; text sorts bytewise. */
export const COMPETITOR_SORTS = {
  created_at: timestampKey('created_at', (r) => r.created_at),
  updated_at: timestampKey('updated_at', (r) => r.updated_at),
  name: textKey('name', (r) => r.name),
  domain: textKey('domain', (r) => r.domain),
} satisfies Record<(typeof COMPETITOR_SORT_FIELDS)[number], SortKey<CompetitorRow>>;

export interface ListFilter {
  domain?: string | undefined;
  q?: string | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

export async function listCompetitors(
  db: Queryable,
  accountId: string,
  f: ListFilter,
  page: PageRequest<CompetitorRow>,
): Promise<CompetitorRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.domain !== undefined) add((p) => `domain = ${p}`, f.domain);
  if (f.created_after !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.created_after);
  if (f.created_before !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.created_before);
  if (f.q !== undefined)
    add((p) => `(name ilike ${p} or website ilike ${p} or notes ilike ${p})`, containsPattern(f.q));
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  // The page is cut first, so the listing counts are computed for its rows only.
  const r = await db.query<CompetitorRow>(
    `/* listCompetitors */ select ${COLUMNS}, ${listingCount('c')} from (
       select ${COLUMNS} from competitors
        where ${where.join(' and ')}
        order by ${keyset.orderBy}
        limit ${keyset.limit}
     ) c
     order by ${keyset.orderBy}`,
    params,
  );
  return r.rows;
}

interface AnalysisRow {
  listing_count: number;
  product_count: number;
  no_price: number;
  out_of_stock: number;
  other_currency: number;
  /** null: the row over every currency. */
  currency: string | null;
  compared: number;
  cheaper: number;
  same: number;
  more_expensive: number;
  average_difference: string | null;
  average_difference_percent: string | null;
}

/**
 * Compares the latest price of each of the competitor's listings with its product's base_price,
 * in one statement (one snapshot). Only prices in the product's own currency are compared, and
 * not those of offers out of stock. undefined when the competitor is not in this account.
 */
export async function analyseCompetitor(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<CompetitorAnalysis | undefined> {
  const r = await db.query<AnalysisRow>(
    `/* analyseCompetitor */ with l as (
       select l.product_id, l.last_price, l.in_stock, l.last_currency, p.base_price, p.currency,
              l.last_price is not null and l.in_stock is not false and l.last_currency = p.currency as comparable
         from listings l join products p on p.id = l.product_id
        where l.competitor_id = $1 and l.account_id = $2
     ),
     totals as (
       select count(*)::int as listing_count,
              count(distinct product_id)::int as product_count,
              (count(*) filter (where last_price is null))::int as no_price,
              (count(*) filter (where last_price is not null and in_stock is false))::int as out_of_stock,
              (count(*) filter (where last_price is not null and in_stock is not false and last_currency <> currency))::int as other_currency
         from l
     ),
     groups as (
       select currency,
              count(*)::int as compared,
              (count(*) filter (where last_price < base_price))::int as cheaper,
              (count(*) filter (where last_price = base_price))::int as same,
              (count(*) filter (where last_price > base_price))::int as more_expensive,
              round(avg(last_price - base_price), 4)::text as average_difference,
              round(avg((last_price - base_price) / base_price * 100) filter (where base_price > 0), 2)::text as average_difference_percent
         from l where comparable
        group by grouping sets ((currency), ())
     )
     select t.*, g.currency, g.compared, g.cheaper, g.same, g.more_expensive, g.average_difference, g.average_difference_percent
       from competitors c cross join totals t left join groups g on true
      where c.id = $1 and c.account_id = $2
      order by g.currency nulls first`,
    [id, accountId],
  );
  const total = r.rows.find((row) => row.currency === null);
  if (!total) return undefined;
  const comparison = (g: AnalysisRow) => ({
    compared: Number(g.compared),
    cheaper: Number(g.cheaper),
    same: Number(g.same),
    more_expensive: Number(g.more_expensive),
    cheaper_share:
      Number(g.compared) > 0 ? Math.round((Number(g.cheaper) / Number(g.compared)) * 10_000) / 10_000 : null,
    average_difference_percent: g.average_difference_percent === null ? null : Number(g.average_difference_percent),
  });
  return {
    object: 'competitor_analysis',
    competitor_id: id,
    listing_count: Number(total.listing_count),
    product_count: Number(total.product_count),
    not_compared: {
      no_price: Number(total.no_price),
      out_of_stock: Number(total.out_of_stock),
      other_currency: Number(total.other_currency),
    },
    overall: comparison(total),
    by_currency: r.rows
      .filter((g): g is AnalysisRow & { currency: string } => g.currency !== null)
      .map((g) => ({ currency: g.currency, ...comparison(g), average_difference: Number(g.average_difference) })),
  };
}

/**
 * Waits for (then holds until commit) the right to create the account's competitors of these
 * domains, so two requests deriving the same domain's competitor at once create one: the second
 * waits, then finds the first's (committed by then). A transaction-scoped advisory lock per
 * (account, domain), taken in sorted order so two requests never wait for each other in a
 * circle; PGlite's one connection takes them too (and never waits).
 */
export async function lockCompetitorDomains(
  db: Queryable,
  accountId: string,
  domains: readonly string[],
): Promise<void> {
  if (domains.length === 0) return;
  await db.query(
    `/* lockCompetitorDomains */
     select count(pg_advisory_xact_lock(${DOMAIN_LOCK_CLASS}, hashtext($1 || ' ' || d.domain)))
       from (select distinct unnest($2::text[]) as domain order by 1) d`,
    [accountId, [...domains].sort()],
  );
}

/** The key space of lockCompetitorDomains (pg_advisory_xact_lock's first key): "cd" in ASCII. */
const DOMAIN_LOCK_CLASS = 0x6364;

/** The account's competitors whose domain is one of `domains`, oldest first, locked against deletion until commit. */
export async function competitorsOfDomains(
  db: Queryable,
  accountId: string,
  domains: readonly string[],
): Promise<CompetitorRow[]> {
  if (domains.length === 0) return [];
  const r = await db.query<CompetitorRow>(
    `/* competitorsOfDomains */
     select ${COLUMNS}, ${listingCount('c')} from competitors c
      where account_id = $1 and domain = any($2::text[])
      order by created_at, id
      for key share`,
    [accountId, [...domains]],
  );
  return r.rows;
}

/** The account's competitors among `ids`, locked against deletion until commit (a listing is about to name them). */
export async function lockCompetitors(
  db: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<CompetitorRow[]> {
  if (ids.length === 0) return [];
  const r = await db.query<CompetitorRow>(
    `/* lockCompetitors */
     select ${COLUMNS}, ${listingCount('c')} from competitors c
      where account_id = $1 and id = any($2::text[])
      for key share`,
    [accountId, [...ids]],
  );
  return r.rows;
}

/** Inserts several competitors in one statement, in the order given. */
export async function insertCompetitors(
  db: Queryable,
  accountId: string,
  cs: readonly NewCompetitor[],
): Promise<CompetitorRow[]> {
  if (cs.length === 0) return [];
  const r = await db.query<CompetitorRow>(
    `/* insertCompetitors */
     insert into competitors (account_id, id, name, website, domain, notes, proxy_url)
     select $1, u.id, u.name, u.website, u.domain, u.notes, u.proxy_url
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) with ordinality
            as u (id, name, website, domain, notes, proxy_url, n)
      order by u.n
     returning ${COLUMNS}, 0 as listing_count`,
    [
      accountId,
      cs.map((c) => c.id),
      cs.map((c) => c.name),
      cs.map((c) => c.website),
      cs.map((c) => c.domain),
      cs.map((c) => c.notes),
      cs.map((c) => c.proxy_url),
    ],
  );
  return r.rows;
}
