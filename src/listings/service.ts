import type { Database, Queryable } from '../db/types.js';
import { isUniqueViolation, PG_FOREIGN_KEY_VIOLATION } from '../db/types.js';
import { type ApiError, ERRORS, type ErrorDetail } from '../http/errors.js';
import { recordEvent, recordEvents } from '../events/service.js';
import {
  atomicBatchError,
  invalidItem,
  invalidItems,
  isFailure,
  type ItemFailure,
  type ItemResult,
} from '../batches/batch.js';
import { competitorsOfSites, domainOf, lockAccountCompetitors } from '../competitors/service.js';
import { type AddressPolicy, pageUrlProblemWithoutLookup } from '../fetcher/address-guard.js';
import { newId } from '../ids.js';
import { checkSelector } from '../extraction/selector.js';
import { notifyListingsDue } from '../checks/service.js';
import {
  INTERVAL_DEFAULT,
  type ListingBatchItem,
  ListingBatchItemSchema,
  type ListingCreate,
  type ListingUpdate,
} from './schemas.js';
import {
  deleteListing,
  diagnoseListingRefs,
  findListingIdByUrl,
  getListing,
  insertCompetitorListings,
  insertListing,
  listedUrls,
  lockBatchProducts,
  type ListingChanges,
  type ListingRow,
  toListing,
  updateListing,
} from './sql.js';

const URL_CONSTRAINT = 'listings_product_url_key';

async function urlConflict(db: Queryable, accountId: string, productId: string, url: string): Promise<ApiError> {
  const owner = await findListingIdByUrl(db, accountId, productId, url);
  return ERRORS.conflict('The product already has a listing with this URL', [
    {
      field: 'url',
      message: owner
        ? `is already monitored for this product by listing ${owner}`
        : 'is already monitored for this product',
    },
  ]);
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === PG_FOREIGN_KEY_VIOLATION;

/**
 * A product or competitor that is not in the account is a 422 naming the field, the same for
 * one that never existed and for another account's (docs/API-DECISIONS.md, "Listings").
 */
async function refusal(db: Queryable, accountId: string, body: ListingCreate): Promise<ApiError> {
  const competitorId = body.competitor_id ?? null;
  const refs = await diagnoseListingRefs(db, accountId, body.product_id, competitorId);
  const details: ErrorDetail[] = [];
  if (!refs.product) details.push({ field: 'product_id', message: 'is not a product of this account' });
  if (competitorId !== null && !refs.competitor)
    details.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
  if (details.length === 0 && body.url === undefined && refs.productUrl === null) {
    details.push({ field: 'url', message: 'is required: the product has no url to monitor' });
  }
  // Only a concurrent change (a product deleted meanwhile, its url cleared) gets here without one.
  if (details.length === 0)
    details.push({ field: 'product_id', message: 'changed while the listing was created; try again' });
  return ERRORS.validation(details);
}

/**
 * The one check of a listing's URL before anything is stored (API.md, "Outbound requests"): an
 * address in a private, loopback, link-local or metadata range is refused unless the operator's
 * policy allows it, the same for one listing, a batch item and a changed URL. Names are not
 * resolved here (the guard runs again before every fetch).
 */
function urlRefusal(url: string, policy: AddressPolicy, field = 'url'): ErrorDetail | undefined {
  const problem = pageUrlProblemWithoutLookup(url, policy);
  return problem === undefined ? undefined : { field, message: problem };
}

/** `hold_factor` is 0 (never hold) or more than 1: a factor of 1 or less would hold every reading. */
function checkHoldFactor(holdFactor: number | null | undefined): ErrorDetail[] {
  if (typeof holdFactor !== 'number' || holdFactor === 0 || holdFactor > 1) return [];
  return [
    {
      field: 'hold_factor',
      message:
        "must be 0 (never hold) or more than 1 (4: hold a fall of 75 % or a rise of 300 %); null: the account's default",
    },
  ];
}

/** Each change commits with its event (docs/EVENTS.md): `listing.created`, `.updated`, `.deleted`. */
export async function createListing(
  db: Database,
  accountId: string,
  body: ListingCreate,
  policy: AddressPolicy,
): Promise<ListingRow> {
  const details: ErrorDetail[] = [...checkSelector(body.selector), ...checkHoldFactor(body.hold_factor)];
  const competitorId = body.competitor_id ?? null;
  if (competitorId !== null && body.url === undefined)
    details.push({ field: 'url', message: "is required for a competitor's listing" });
  const refused = body.url === undefined ? undefined : urlRefusal(body.url, policy);
  if (refused) details.push(refused);
  if (details.length > 0) throw ERRORS.validation(details);
  let row: ListingRow | undefined;
  const listing = {
    id: newId('lst'),
    product_id: body.product_id,
    competitor_id: competitorId,
    url: body.url ?? null,
    selector: body.selector ?? null,
    currency_override: body.currency_override?.toUpperCase() ?? null,
    check_interval_seconds: body.check_interval_seconds ?? INTERVAL_DEFAULT,
    enabled: body.enabled ?? true,
    respect_robots: body.respect_robots ?? true,
    render_js: body.render_js ?? false,
    visible_fallback: body.visible_fallback ?? true,
    hold_factor: body.hold_factor ?? null,
  };
  try {
    row = await db.transaction(async (tx) => {
      const inserted = await insertListing(tx, accountId, listing);
      if (!inserted) return inserted;
      // Without a url of its own it takes the product's, which is checked the same way (nothing is kept).
      const taken = body.url === undefined ? urlRefusal(inserted.url, policy) : undefined;
      if (taken)
        throw ERRORS.validation([
          { ...taken, message: `${taken.message} (the product's url, which a listing without its own takes)` },
        ]);
      await recordEvent(tx, accountId, 'listing.created', toListing(inserted));
      return inserted;
    });
  } catch (err) {
    if (isUniqueViolation(err, URL_CONSTRAINT)) {
      const url = body.url ?? (await diagnoseListingRefs(db, accountId, body.product_id, null)).productUrl;
      throw url === null ? err : await urlConflict(db, accountId, body.product_id, url);
    }
    if (isForeignKeyViolation(err)) throw await refusal(db, accountId, body);
    throw err;
  }
  if (!row) throw await refusal(db, accountId, body);
  // Due at once: wake the workers instead of leaving it to their next poll.
  if (row.enabled) await notifyListingsDue(db);
  return row;
}

/** Fields whose change makes the listing due now (src/listings/sql.ts, updateListing). */
const RESCHEDULING_FIELDS = [
  'url',
  'selector',
  'currency_override',
  'check_interval_seconds',
  'respect_robots',
  'render_js',
  'visible_fallback',
] as const;

export async function changeListing(
  db: Database,
  accountId: string,
  id: string,
  body: ListingUpdate,
  policy: AddressPolicy,
): Promise<ListingRow> {
  const details = [...checkSelector(body.selector), ...checkHoldFactor(body.hold_factor)];
  const refused = body.url === undefined ? undefined : urlRefusal(body.url, policy);
  if (refused) details.push(refused);
  if (details.length > 0) throw ERRORS.validation(details);
  const changes: ListingChanges = { ...body };
  if (typeof body.currency_override === 'string') changes.currency_override = body.currency_override.toUpperCase();
  const changesSomething = Object.values(changes).some((v) => v !== undefined);
  try {
    const row = await db.transaction(async (tx) => {
      const updated = await updateListing(tx, accountId, id, changes);
      if (!updated) throw ERRORS.notFound('Listing');
      if (changesSomething) await recordEvent(tx, accountId, 'listing.updated', toListing(updated));
      return updated;
    });
    // It may have become due now; a notification when it did not costs the workers one probe.
    if (row.enabled && (body.enabled === true || RESCHEDULING_FIELDS.some((f) => body[f] !== undefined)))
      await notifyListingsDue(db);
    return row;
  } catch (err) {
    if (isUniqueViolation(err, URL_CONSTRAINT) && body.url !== undefined) {
      const listing = await getListing(db, accountId, id);
      if (listing) throw await urlConflict(db, accountId, listing.product_id, body.url);
    }
    throw err;
  }
}

/** Its check log goes with it; the prices it observed stay in the history. */
export async function removeListing(db: Database, accountId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await deleteListing(tx, accountId, id);
    if (!row) throw ERRORS.notFound('Listing');
    await recordEvent(tx, accountId, 'listing.deleted', toListing(row));
  });
}

/** Thrown inside the batch transaction to roll it back when an atomic batch has a failure. */
class AtomicBatchFailed extends Error {}

const BATCH_WORDS = { resources: 'listings', nothing: 'nothing was created' };

const alreadyListed = (index: number, listingId: string | undefined): ItemFailure => ({
  index,
  status: 409,
  code: 'conflict',
  error: 'The product already has a listing with this URL',
  details: [
    {
      field: 'url',
      message: listingId
        ? `is already monitored for this product by listing ${listingId}`
        : 'is already monitored for this product',
    },
  ],
});

/** What the schema cannot say about an item: one of product_id and product_sku, a URL that may be fetched. */
function itemProblems(item: ListingBatchItem, policy: AddressPolicy): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if ((item.product_id === undefined) === (item.product_sku === undefined)) {
    const message =
      item.product_id === undefined
        ? 'or product_sku is required'
        : 'and product_sku cannot both be given: name the product one way';
    details.push({ field: 'product_id', message });
  }
  const refused = urlRefusal(item.url, policy);
  if (refused) details.push(refused);
  else if (item.competitor_id === undefined && domainOf(item.url) === undefined)
    details.push({ field: 'url', message: 'must name a host' });
  return details;
}

/** The home page of a URL's site, the website of a competitor created for it. */
const homePage = (url: string) => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/`;
};

/**
 * Creates competitors' listings (POST /listings/batch), each item on its own: invalid fields
 * and refused URLs are 422, a product or competitor not in the account 404 (the same for one
 * that never existed and another account's), a product and URL already listed, or earlier in the
 * batch, 409. An item without `competitor_id` gets the account's competitor of its URL's domain,
 * created when there is none (`competitorsOfSites`). Everything, events included (the new
 * competitors' `competitor.created`, then each `listing.created`), commits in one transaction;
 * with `atomic`, any failure creates nothing and throws one error listing each failed item.
 */
export async function createListingsBatch(
  db: Database,
  accountId: string,
  items: unknown[],
  atomic: boolean,
  policy: AddressPolicy,
): Promise<ItemResult<ListingRow>[]> {
  const invalid = invalidItems(items, ListingBatchItemSchema);
  const results: ItemResult<ListingRow>[] = [];
  const candidates: { index: number; item: ListingBatchItem }[] = [];
  items.forEach((raw, index) => {
    const details = invalid.get(index) ?? itemProblems(raw as ListingBatchItem, policy);
    if (details.length > 0) return results.push(invalidItem(index, details));
    candidates.push({ index, item: raw as ListingBatchItem });
  });
  if (atomic && results.length > 0) throw atomicBatchError(results, 'listings', BATCH_WORDS);
  if (candidates.length === 0) return results;

  let created = false;
  try {
    await db.transaction(async (tx) => {
      const ids = candidates.flatMap(({ item }) => (item.product_id === undefined ? [] : [item.product_id]));
      const skus = candidates.flatMap(({ item }) => (item.product_sku === undefined ? [] : [item.product_sku]));
      const products = await lockBatchProducts(tx, accountId, ids, skus);
      const productIds = new Set(products.map((p) => p.id));
      const bySku = new Map(products.flatMap((p) => (p.sku === null ? [] : [[p.sku, p.id] as const])));
      const competitors = await lockAccountCompetitors(
        tx,
        accountId,
        candidates.flatMap(({ item }) => (item.competitor_id === undefined ? [] : [item.competitor_id])),
      );

      // Each item's product, its competitor when named, and no repeat of a product and URL.
      const seen = new Map<string, number>();
      const resolved: { index: number; product_id: string; url: string; competitor_id?: string }[] = [];
      for (const { index, item } of candidates) {
        const productId = item.product_id ?? bySku.get(item.product_sku!);
        const missing: ErrorDetail[] = [];
        if (productId === undefined || !productIds.has(productId)) {
          missing.push(
            item.product_id === undefined
              ? { field: 'product_sku', message: 'is not the SKU of a product of this account' }
              : { field: 'product_id', message: 'is not a product of this account' },
          );
        }
        if (item.competitor_id !== undefined && !competitors.has(item.competitor_id)) {
          missing.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
        }
        if (missing.length > 0) {
          const what =
            missing.length === 1 ? (missing[0]!.field === 'competitor_id' ? 'competitor' : 'product') : 'reference';
          results.push({
            index,
            status: 404,
            code: 'not_found',
            error: `The item names a ${what} that is not in this account`,
            details: missing,
          });
          continue;
        }
        const key = `${productId!} ${item.url}`;
        const first = seen.get(key);
        if (first !== undefined) {
          results.push({
            index,
            status: 409,
            code: 'conflict',
            error: 'The product and URL appear more than once in this batch',
            details: [{ field: 'url', message: `is the same page of the same product as item ${first}` }],
          });
          continue;
        }
        seen.set(key, index);
        resolved.push({
          index,
          product_id: productId!,
          url: item.url,
          ...(item.competitor_id === undefined ? {} : { competitor_id: item.competitor_id }),
        });
      }

      // A URL the product already has: 409 before any competitor is made for it.
      const listed = new Map(
        (await listedUrls(tx, accountId, resolved)).map((l) => [`${l.product_id} ${l.url}`, l.id]),
      );
      const going = resolved.filter((r) => {
        const owner = listed.get(`${r.product_id} ${r.url}`);
        if (owner !== undefined) results.push(alreadyListed(r.index, owner));
        return owner === undefined;
      });
      if (atomic && results.some(isFailure)) throw new AtomicBatchFailed();

      const sites = going.flatMap((r) =>
        r.competitor_id === undefined ? [{ domain: domainOf(r.url)!, website: homePage(r.url) }] : [],
      );
      const { byDomain, created: newCompetitors } = await competitorsOfSites(tx, accountId, sites);
      const rows = await insertCompetitorListings(
        tx,
        accountId,
        going.map((r) => ({
          id: newId('lst'),
          product_id: r.product_id,
          url: r.url,
          competitor_id: r.competitor_id ?? byDomain.get(domainOf(r.url)!)!,
        })),
        INTERVAL_DEFAULT,
      );
      const byKey = new Map(rows.map((row) => [`${row.product_id} ${row.url}`, row]));
      for (const r of going) {
        const row = byKey.get(`${r.product_id} ${r.url}`);
        // Missing: listed by a concurrent request since listedUrls.
        if (row) results.push({ index: r.index, status: 201, row });
        else results.push(alreadyListed(r.index, await findListingIdByUrl(tx, accountId, r.product_id, r.url)));
      }
      if (atomic && results.some(isFailure)) throw new AtomicBatchFailed();
      await recordEvents(tx, accountId, [
        ...newCompetitors.map((c) => ({ type: 'competitor.created' as const, data: c })),
        ...rows.map((row) => ({ type: 'listing.created' as const, data: toListing(row) })),
      ]);
      created = rows.length > 0;
    });
  } catch (err) {
    if (err instanceof AtomicBatchFailed) throw atomicBatchError(results, 'listings', BATCH_WORDS);
    throw err;
  }
  // Due at once: wake the workers instead of leaving it to their next poll.
  if (created) await notifyListingsDue(db);
  return results;
}
