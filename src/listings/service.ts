import type { Database, Queryable } from '../db/types.js';
import { isUniqueViolation, PG_FOREIGN_KEY_VIOLATION } from '../db/types.js';
import { type ApiError, ERRORS, type ErrorDetail } from '../http/errors.js';
import { recordEvent } from '../events/service.js';
import { newId } from '../ids.js';
import { checkSelector } from '../extraction/selector.js';
import { notifyListingsDue } from '../checks/service.js';
import { INTERVAL_DEFAULT, type ListingCreate, type ListingUpdate } from './schemas.js';
import {
  deleteListing,
  diagnoseListingRefs,
  findListingIdByUrl,
  getListing,
  insertListing,
  type ListingChanges,
  type ListingRow,
  toListing,
  updateListing,
} from './sql.js';

const URL_CONSTRAINT = 'listings_product_url_key';

async function urlConflict(db: Queryable, accountId: string, productId: string, url: string): Promise<ApiError> {
  const owner = await findListingIdByUrl(db, accountId, productId, url);
  return ERRORS.conflict('The product already has a listing with this URL', [
    { field: 'url', message: owner ? `is already monitored for this product by listing ${owner}` : 'is already monitored for this product' },
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
  if (competitorId !== null && !refs.competitor) details.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
  if (details.length === 0 && body.url === undefined && refs.productUrl === null) {
    details.push({ field: 'url', message: 'is required: the product has no url to monitor' });
  }
  // Only a concurrent change (a product deleted meanwhile, its url cleared) gets here without one.
  if (details.length === 0) details.push({ field: 'product_id', message: 'changed while the listing was created; try again' });
  return ERRORS.validation(details);
}

/** `hold_factor` is 0 (never hold) or more than 1: a factor of 1 or less would hold every reading. */
function checkHoldFactor(holdFactor: number | null | undefined): ErrorDetail[] {
  if (typeof holdFactor !== 'number' || holdFactor === 0 || holdFactor > 1) return [];
  return [{ field: 'hold_factor', message: 'must be 0 (never hold) or more than 1 (4: hold a fall of 75 % or a rise of 300 %); null: the account\'s default' }];
}

/** Each change commits with its event (docs/EVENTS.md): `listing.created`, `.updated`, `.deleted`. */
export async function createListing(db: Database, accountId: string, body: ListingCreate): Promise<ListingRow> {
  const details: ErrorDetail[] = [...checkSelector(body.selector), ...checkHoldFactor(body.hold_factor)];
  const competitorId = body.competitor_id ?? null;
  if (competitorId !== null && body.url === undefined) details.push({ field: 'url', message: 'is required for a competitor\'s listing' });
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
      if (inserted) await recordEvent(tx, accountId, 'listing.created', toListing(inserted));
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
const RESCHEDULING_FIELDS = ['url', 'selector', 'currency_override', 'check_interval_seconds', 'respect_robots', 'render_js', 'visible_fallback'] as const;

export async function changeListing(db: Database, accountId: string, id: string, body: ListingUpdate): Promise<ListingRow> {
  const details = [...checkSelector(body.selector), ...checkHoldFactor(body.hold_factor)];
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
    if (row.enabled && (body.enabled === true || RESCHEDULING_FIELDS.some((f) => body[f] !== undefined))) await notifyListingsDue(db);
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
