import type { Queryable } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { checkRange } from '../pagination/filters.js';
import { pageOf, pageRequest } from '../pagination/page.js';
import type { ListingListQuery } from './schemas.js';
import { type ListFilter, LISTING_SORTS, listListings, toListing } from './sql.js';

/**
 * One page of listings for the three list operations (all listings, a product's, a
 * competitor's): the query's filters, with `fixed` the one the path sets.
 */
export async function listingPage(db: Queryable, accountId: string, q: ListingListQuery, fixed: ListFilter = {}) {
  const filter: ListFilter = { ...q, ...fixed };
  checkRange(q, 'created_after', 'created_before');
  if (filter.own === true && filter.competitor_id !== undefined) {
    throw ERRORS.invalidQuery([
      {
        field: 'own',
        message: 'own=true lists our own pages, which have no competitor; do not combine it with a competitor',
      },
    ]);
  }
  const page = pageRequest(q, LISTING_SORTS, '-created_at');
  return pageOf(await listListings(db, accountId, filter, page), page, toListing);
}
