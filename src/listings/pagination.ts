import type { Queryable } from '../db/types.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { ERRORS } from '../http/errors.js';
import type { ListingListQuery } from './schemas.js';
import { type ListFilter, listListings, SORT_SQL, toListing } from './sql.js';

/**
 * One page of listings for the three list operations (all listings, a product's, a
 * competitor's): the query's filters, sort and cursor, and the list envelope.
 */
export async function listingPage(db: Queryable, accountId: string, q: ListingListQuery, fixed: ListFilter = {}) {
  const filter: ListFilter = {
    product_id: q.product_id,
    competitor_id: q.competitor_id,
    own: q.own,
    status: q.status,
    enabled: q.enabled,
    created_after: q.created_after,
    created_before: q.created_before,
    ...fixed,
  };
  const invalid = (field: string, message: string) => ERRORS.validation([{ field, message }], 'The query has invalid parameters');
  if (q.created_after && q.created_before && Date.parse(q.created_after) >= Date.parse(q.created_before)) {
    throw invalid('created_after', 'must be before created_before');
  }
  if (filter.own === true && filter.competitor_id !== undefined) {
    throw invalid('own', 'own=true lists our own pages, which have no competitor; do not combine it with a competitor');
  }
  const sort = q.sort ?? '-created_at';
  const descending = sort.startsWith('-');
  const sortField = descending ? sort.slice(1) : sort;
  const limit = q.limit ?? 20;
  const after = q.cursor ? decodeCursor(q.cursor, sort, SORT_SQL[sortField]!.accepts) : undefined;
  const rows = await listListings(db, accountId, { filter, sortField, descending, after, limit: limit + 1 });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    data: page.map(toListing),
    pagination: {
      limit,
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor({ sort, value: SORT_SQL[sortField]!.value(last), id: last.id }) : null,
    },
  };
}
