import type { CheckOutcomeName, CheckRow } from '../checks/schemas.js';
import { domainOf, withinDomain } from '../competitors/service.js';
import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { publicId } from '../ids.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { sequenceTiebreak, type SortKey, timestampKey } from '../pagination/sort.js';
import type { Listing, LISTING_SORT_FIELDS } from './schemas.js';

/** Every listing query of the API, as parameterised SQL, always scoped by account. */

export interface ListingRow {
  id: string;
  account_id: string;
  product_id: string;
  competitor_id: string | null;
  url: string;
  selector: string | null;
  currency_override: string | null;
  check_interval_seconds: number;
  enabled: boolean;
  respect_robots: boolean;
  render_js: boolean;
  visible_fallback: boolean;
  hold_factor: number | null;
  status: Listing['status'];
  last_checked_at: Date | null;
  last_success_at: Date | null;
  last_price: string | null;
  last_currency: string | null;
  in_stock: boolean | null;
  last_error: string | null;
  consecutive_failures: number;
  next_check_at: Date;
  held_check_id: string | number | null;
  created_at: Date;
  updated_at: Date;
  /** The competitor's domain (null for our own pages), for the domain warning. */
  competitor_domain: string | null;
  /** The pending held reading (heldReading), as JSON. */
  held: {
    check_id: string;
    price: string | number;
    currency: string;
    in_stock: boolean | null;
    reason: string;
    checked_at: string;
  } | null;
}

const COLUMNS = [
  'id',
  'account_id',
  'product_id',
  'competitor_id',
  'url',
  'selector',
  'currency_override',
  'check_interval_seconds',
  'enabled',
  'respect_robots',
  'render_js',
  'visible_fallback',
  'hold_factor',
  'status',
  'last_checked_at',
  'last_success_at',
  'last_price',
  'last_currency',
  'in_stock',
  'last_error',
  'consecutive_failures',
  'next_check_at',
  'held_check_id',
  'created_at',
  'updated_at',
] as const;

/** The listing columns of table alias `alias`, e.g. for a join. */
export const listingColumns = (alias: string) => COLUMNS.map((c) => `${alias}.${c}`).join(', ');
/** The competitor's domain of the listing in `alias`, for toListing's warning. */
export const competitorDomain = (alias: string) =>
  `(select c.domain from competitors c where c.id = ${alias}.competitor_id) as competitor_domain`;

/** The listing's pending held reading (its listing_checks row) as JSON, for toListing. */
export const heldReading = (alias: string) =>
  `(select json_build_object('check_id', k.id::text, 'price', k.price::text, 'currency', k.currency, 'in_stock', k.in_stock,
                             'reason', k.held_reason, 'checked_at', k.read_at)
      from listing_checks k where k.id = ${alias}.held_check_id and k.listing_id = ${alias}.id) as held`;

/** The columns every statement returning whole listings returns, for table (or alias) `t`. */
const extras = (t: string) => `${competitorDomain(t)}, ${heldReading(t)}`;

/** What a listing's response says about the row; the one place the row becomes the resource. */
export function toListing(r: ListingRow): Listing {
  const warnings: Listing['warnings'] = [];
  if (r.competitor_domain !== null) {
    const host = domainOf(r.url);
    if (host !== undefined && !withinDomain(host, r.competitor_domain) && !withinDomain(r.competitor_domain, host)) {
      warnings.push({
        code: 'domain_mismatch',
        message: `the URL's domain ${host} is not the competitor's domain ${r.competitor_domain}; check that the listing belongs to this competitor`,
      });
    }
  }
  return {
    id: r.id,
    object: 'listing',
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    url: r.url,
    selector: r.selector,
    currency_override: r.currency_override,
    check_interval_seconds: Number(r.check_interval_seconds),
    enabled: r.enabled,
    respect_robots: r.respect_robots,
    render_js: r.render_js,
    visible_fallback: r.visible_fallback,
    hold_factor: r.hold_factor === null ? null : Number(r.hold_factor),
    status: r.status,
    last_checked_at: r.last_checked_at === null ? null : iso(r.last_checked_at),
    last_success_at: r.last_success_at === null ? null : iso(r.last_success_at),
    last_price: r.last_price === null ? null : Number(r.last_price),
    last_currency: r.last_currency,
    in_stock: r.in_stock,
    last_error: r.last_error,
    consecutive_failures: Number(r.consecutive_failures),
    next_check_at: r.enabled ? iso(r.next_check_at) : null,
    held:
      r.held === null
        ? null
        : {
            check_id: publicId('chk', r.held.check_id),
            price: Number(r.held.price),
            currency: r.held.currency,
            in_stock: r.held.in_stock,
            reason: r.held.reason,
            checked_at: iso(r.held.checked_at),
          },
    warnings,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export interface NewListing {
  id: string;
  product_id: string;
  competitor_id: string | null;
  /** null: our own page at the product's url. */
  url: string | null;
  selector: string | null;
  currency_override: string | null;
  check_interval_seconds: number;
  enabled: boolean;
  respect_robots: boolean;
  render_js: boolean;
  visible_fallback: boolean;
  hold_factor: number | null;
}

/**
 * Inserts the listing if its product (and competitor, when one is named) belong to the account
 * and it has a URL (its own or, for our own page, the product's); one statement, so a product
 * deleted meanwhile cannot slip in between a check and the insert. undefined when any of that
 * fails: `diagnoseListingRefs` says which.
 */
export async function insertListing(db: Queryable, accountId: string, l: NewListing): Promise<ListingRow | undefined> {
  const r = await db.query<ListingRow>(
    `/* insertListing */ insert into listings (account_id, id, product_id, competitor_id, url, selector, currency_override,
                           check_interval_seconds, enabled, respect_robots, render_js, visible_fallback, hold_factor)
     select $1, $2, p.id, $4::text, coalesce($5::text, p.url), $6, $7, $8, $9, $10, $11, $12, $13::float8
       from products p
      where p.id = $3 and p.account_id = $1
        and coalesce($5::text, p.url) is not null
        and ($4::text is null or exists (select 1 from competitors c where c.id = $4::text and c.account_id = $1))
     returning ${COLUMNS.join(', ')}, ${extras('listings')}`,
    [
      accountId,
      l.id,
      l.product_id,
      l.competitor_id,
      l.url,
      l.selector,
      l.currency_override,
      l.check_interval_seconds,
      l.enabled,
      l.respect_robots,
      l.render_js,
      l.visible_fallback,
      l.hold_factor,
    ],
  );
  return r.rows[0];
}

/** Whether the product and competitor a new listing names exist in the account, and the product's url. */
export async function diagnoseListingRefs(
  db: Queryable,
  accountId: string,
  productId: string,
  competitorId: string | null,
): Promise<{ product: boolean; productUrl: string | null; competitor: boolean }> {
  const r = await db.query<{ product: boolean; product_url: string | null; competitor: boolean }>(
    `/* diagnoseListingRefs */ select exists (select 1 from products where id = $1 and account_id = $3) as product,
            (select url from products where id = $1 and account_id = $3) as product_url,
            exists (select 1 from competitors where id = $2 and account_id = $3) as competitor`,
    [productId, competitorId, accountId],
  );
  const row = r.rows[0]!;
  return { product: row.product, productUrl: row.product_url, competitor: row.competitor };
}

/** The listing of `productId` at `url`, if any (for the 409 of a duplicate). */
export async function findListingIdByUrl(
  db: Queryable,
  accountId: string,
  productId: string,
  url: string,
): Promise<string | undefined> {
  const r = await db.query<{ id: string }>(
    '/* findListingIdByUrl */ select id from listings where product_id = $1 and url = $2 and account_id = $3',
    [productId, url, accountId],
  );
  return r.rows[0]?.id;
}

export async function getListing(db: Queryable, accountId: string, id: string): Promise<ListingRow | undefined> {
  const r = await db.query<ListingRow>(
    `/* getListing */ select ${listingColumns('l')}, ${extras('l')} from listings l where l.id = $1 and l.account_id = $2`,
    [id, accountId],
  );
  return r.rows[0];
}

/** Settings that change what a check does: changing one schedules a check now. */
const RESCHEDULING = [
  'url',
  'selector',
  'currency_override',
  'check_interval_seconds',
  'respect_robots',
  'render_js',
  'visible_fallback',
] as const;
const UPDATABLE = [...RESCHEDULING, 'enabled', 'hold_factor'] as const;
export type ListingChanges = Partial<Record<(typeof UPDATABLE)[number], string | number | boolean | null>>;
/**
 * Settings that re-point the listing: a price read before is no longer this listing's, so its
 * held reading is dropped (superseded) and the rejected one forgotten, as recordCheck discards a
 * check whose listing changed these meanwhile (src/checks/sql.ts).
 */
const REPOINTING = ['url', 'selector', 'currency_override'] as const;

/**
 * Sets only the given fields. A value that differs from the stored one in a setting that changes
 * what a check does (or enabling a disabled listing) also makes the listing due now, so the
 * change shows in its state at the next free worker instead of up to 30 days later; sending a
 * setting unchanged reschedules nothing. undefined when the listing is not in this account.
 */
export async function updateListing(
  db: Queryable,
  accountId: string,
  id: string,
  changes: ListingChanges,
): Promise<ListingRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id, accountId];
  const differs: string[] = [];
  const repoints: string[] = [];
  for (const col of UPDATABLE) {
    if (changes[col] === undefined) continue;
    params.push(changes[col]);
    const p = col === 'hold_factor' ? `$${params.length}::float8` : `$${params.length}`;
    sets.push(`${col} = ${p}`);
    if ((RESCHEDULING as readonly string[]).includes(col)) differs.push(`${col} is distinct from ${p}`);
    if ((REPOINTING as readonly string[]).includes(col)) repoints.push(`${col} is distinct from ${p}`);
    if (col === 'enabled') differs.push(`(not enabled and ${p})`);
  }
  if (sets.length === 0) return getListing(db, accountId, id);
  const reschedule =
    differs.length > 0 ? `, next_check_at = case when ${differs.join(' or ')} then now() else next_check_at end` : '';
  const repoint = repoints.join(' or ');
  const forget =
    repoints.length > 0
      ? `, held_check_id = case when ${repoint} then null else held_check_id end,
           rejected_price = case when ${repoint} then null else rejected_price end,
           rejected_currency = case when ${repoint} then null else rejected_currency end`
      : '';
  const r = await db.query<ListingRow>(
    // Strictly later than before, as for products (src/products/sql.ts). The right-hand sides
    // read the row as it was before this update.
    `/* updateListing */ update listings set ${sets.join(', ')}${reschedule}${forget},
            updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and account_id = $2
      returning ${COLUMNS.join(', ')}, ${extras('listings')}`,
    params,
  );
  return r.rows[0];
}

/**
 * Its check log goes with it; observed prices stay in the price history (their listing_id
 * becomes null). The deleted listing as it was; undefined when it is not in this account.
 */
export async function deleteListing(db: Queryable, accountId: string, id: string): Promise<ListingRow | undefined> {
  const r = await db.query<ListingRow>(
    `/* deleteListing */ delete from listings where id = $1 and account_id = $2 returning ${COLUMNS.join(', ')}, ${extras('listings')}`,
    [id, accountId],
  );
  return r.rows[0];
}

/** The sort keys of the listing lists. */
export const LISTING_SORTS = {
  created_at: timestampKey('created_at', (r) => r.created_at),
  updated_at: timestampKey('updated_at', (r) => r.updated_at),
  next_check_at: timestampKey('next_check_at', (r) => r.next_check_at),
} satisfies Record<(typeof LISTING_SORT_FIELDS)[number], SortKey<ListingRow>>;

export interface ListFilter {
  product_id?: string | undefined;
  competitor_id?: string | undefined;
  own?: boolean | undefined;
  status?: string | undefined;
  enabled?: boolean | undefined;
  held?: boolean | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

export async function listListings(
  db: Queryable,
  accountId: string,
  f: ListFilter,
  page: PageRequest<ListingRow>,
): Promise<ListingRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.product_id !== undefined) add((p) => `product_id = ${p}`, f.product_id);
  if (f.competitor_id !== undefined) add((p) => `competitor_id = ${p}`, f.competitor_id);
  if (f.own !== undefined) where.push(f.own ? 'competitor_id is null' : 'competitor_id is not null');
  if (f.status !== undefined) add((p) => `status = ${p}`, f.status);
  if (f.enabled !== undefined) add((p) => `enabled = ${p}`, f.enabled);
  if (f.held !== undefined) where.push(f.held ? 'held_check_id is not null' : 'held_check_id is null');
  if (f.created_after !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.created_after);
  if (f.created_before !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.created_before);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  // The page is cut first, so competitor domains and held readings are looked up for its rows only.
  const r = await db.query<ListingRow>(
    `/* listListings */ select ${listingColumns('l')}, ${extras('l')} from (
       select ${COLUMNS.join(', ')} from listings
        where ${where.join(' and ')}
        order by ${keyset.orderBy}
        limit ${keyset.limit}
     ) l
     order by ${keyset.orderBy}`,
    params,
  );
  return r.rows;
}

/** The check log's one order, newest first; its tiebreak is the check's bigint id. */
export const CHECK_LOG_SORTS = {
  started_at: {
    ...timestampKey<CheckRow>('k.started_at', (r) => r.started_at),
    tiebreak: sequenceTiebreak<CheckRow>('chk', 'k.id', (r) => r.id),
  },
} satisfies Record<string, SortKey<CheckRow>>;

/** The check log's `outcome` filter: recorded is ok; held has a reason and is not ok; failed neither. */
const OUTCOME_WHERE: Record<CheckOutcomeName, string> = {
  recorded: 'k.ok',
  held: 'not k.ok and k.held_reason is not null',
  failed: 'not k.ok and k.held_reason is null',
};

/** A page of the listing's check log. */
export async function listChecks(
  db: Queryable,
  accountId: string,
  listingId: string,
  filter: { ok?: boolean | undefined; outcome?: CheckOutcomeName | undefined },
  page: PageRequest<CheckRow>,
): Promise<CheckRow[]> {
  const params: unknown[] = [listingId, accountId];
  const where = ['k.listing_id = $1', 'l.account_id = $2'];
  if (filter.ok !== undefined) {
    params.push(filter.ok);
    where.push(`k.ok = $${params.length}`);
  }
  if (filter.outcome !== undefined) where.push(OUTCOME_WHERE[filter.outcome]);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<CheckRow>(
    `/* listChecks */ select k.id, k.listing_id, k.started_at, k.duration_ms, k.ok, k.http_status, k.final_url, k.price, k.currency,
            k.in_stock, k.source, k.error_code, k.error, k.candidates,
            k.held_reason, k.held_previous_price, k.held_previous_currency, k.held_factor, k.read_at, k.confirmed_by,
            k.held_resolution, k.resolved_at, coalesce(l.held_check_id = k.id, false) as held_pending
       from listing_checks k join listings l on l.id = k.listing_id
      where ${where.join(' and ')}
      order by ${keyset.orderBy}
      limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

/**
 * The account's products among `ids` and `skus` (id and sku of each), locked against deletion
 * until commit: a batch of listings is about to name them.
 */
export async function lockBatchProducts(
  db: Queryable,
  accountId: string,
  ids: readonly string[],
  skus: readonly string[],
): Promise<{ id: string; sku: string | null }[]> {
  if (ids.length === 0 && skus.length === 0) return [];
  const r = await db.query<{ id: string; sku: string | null }>(
    `/* lockBatchProducts */
     select id, sku from products
      where account_id = $1 and (id = any($2::text[]) or sku = any($3::text[]))
      for key share`,
    [accountId, [...ids], [...skus]],
  );
  return r.rows;
}

/** The listings these products already have at these URLs (pairs by position), for a batch's 409s. */
export async function listedUrls(
  db: Queryable,
  accountId: string,
  pairs: readonly { product_id: string; url: string }[],
): Promise<{ id: string; product_id: string; url: string }[]> {
  if (pairs.length === 0) return [];
  const r = await db.query<{ id: string; product_id: string; url: string }>(
    `/* listedUrls */
     select l.id, l.product_id, l.url
       from listings l
       join unnest($2::text[], $3::text[]) as u (product_id, url) on l.product_id = u.product_id and l.url = u.url
      where l.account_id = $1`,
    [accountId, pairs.map((p) => p.product_id), pairs.map((p) => p.url)],
  );
  return r.rows;
}

/**
 * Inserts competitors' listings with the defaults of POST /listings (`INTERVAL_DEFAULT`, enabled,
 * robots respected, no JavaScript, the visible fallback on), due at once, in one statement. A
 * product and URL that are already listed (by a concurrent request since listedUrls) are skipped,
 * not an error: the caller finds them missing from the rows returned (by product and URL: the
 * rows come back in key order, not in the order given).
 */
export async function insertCompetitorListings(
  db: Queryable,
  accountId: string,
  ls: readonly { id: string; product_id: string; competitor_id: string; url: string }[],
  checkIntervalSeconds: number,
): Promise<ListingRow[]> {
  if (ls.length === 0) return [];
  const r = await db.query<ListingRow>(
    `/* insertCompetitorListings */
     insert into listings (account_id, id, product_id, competitor_id, url, check_interval_seconds)
     select $1, u.id, u.product_id, u.competitor_id, u.url, $6
       from unnest($2::text[], $3::text[], $4::text[], $5::text[]) as u (id, product_id, competitor_id, url)
      -- In key order, so two batches inserting some of the same pages never wait for each other in a circle.
      order by u.product_id, u.url
     on conflict (product_id, url) do nothing
     returning ${COLUMNS.join(', ')}, ${extras('listings')}`,
    [
      accountId,
      ls.map((l) => l.id),
      ls.map((l) => l.product_id),
      ls.map((l) => l.competitor_id),
      ls.map((l) => l.url),
      checkIntervalSeconds,
    ],
  );
  return r.rows;
}
