import { ERRORS } from '../http/errors.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { parseSort, type SortKey, type SortKeys, type Tiebreak } from './sort.js';

/** The query parameters every list takes (src/pagination/schemas.ts). */
export interface ListQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
  sort?: string | undefined;
}

export const DEFAULT_LIMIT = 20;

/** One page a list route asks for: its order, where it starts and how many rows it shows. */
export interface PageRequest<R> {
  /** The sort as the cursor carries it (`-created_at`). */
  sort: string;
  key: SortKey<R>;
  descending: boolean;
  limit: number;
  /** The last row of the previous page: its key value and tiebreak. */
  after: { value: unknown; id: string } | undefined;
}

const byId: Tiebreak<unknown> = { expr: 'id', cast: '', of: (r) => (r as { id: string }).id, accepts: () => true };
const tiebreakOf = <R>(key: SortKey<R>) => (key.tiebreak ?? byId) as Tiebreak<R>;

/**
 * Reads `sort`, `limit` and `cursor`: a cursor of another sort, or one this API could not have
 * issued, is a 400 (never a silent restart from the top, nor an SQL error). `sorts` must hold
 * every field the route's schema lets through.
 */
export function pageRequest<R>(
  q: ListQuery,
  sorts: SortKeys<R>,
  defaultSort: string,
  defaultLimit = DEFAULT_LIMIT,
): PageRequest<R> {
  const sort = q.sort ?? defaultSort;
  const { field, descending } = parseSort(sort);
  const key = sorts[field];
  if (!key) throw new Error(`no sort key for ${field}`);
  let after: PageRequest<R>['after'];
  if (q.cursor) {
    const c = decodeCursor(q.cursor, sort, key.accepts);
    if (!tiebreakOf(key).accepts(c.id)) {
      throw ERRORS.invalidRequest('The cursor is not valid; pass next_cursor from a previous page unchanged', [
        { field: 'cursor', message: 'is not a cursor this API issued' },
      ]);
    }
    after = { value: c.value, id: c.id };
  }
  return { sort, key, descending, limit: q.limit ?? defaultLimit, after };
}

/**
 * The SQL of a page: `after` (a WHERE clause starting after the cursor, or undefined),
 * `orderBy` (without the keywords) and `limit` (the placeholder of limit + 1: the extra row only
 * says that a next page exists). Values are pushed onto `params`.
 *
 * `after` is a row comparison, which an index on (key, tiebreak) can start at exactly; with
 * `expanded` it is written `key >= v and (key > v or tiebreak > i)`, the same rows, for an index
 * that holds the key but not the tiebreak.
 */
export function pageSql<R>(
  page: PageRequest<R>,
  params: unknown[],
  opts: { expanded?: boolean } = {},
): { after: string | undefined; orderBy: string; limit: string } {
  const { key, descending } = page;
  const tiebreak = tiebreakOf(key);
  const dir = descending ? 'desc' : 'asc';
  let after: string | undefined;
  if (page.after) {
    params.push(key.param ? key.param(page.after.value) : page.after.value);
    const v = `$${params.length}${key.cast}`;
    const op = descending ? '<' : '>';
    if (tiebreak.expr === null) after = `${key.expr} ${op} ${v}`;
    else {
      params.push(tiebreak.param ? tiebreak.param(page.after.id) : page.after.id);
      const i = `$${params.length}${tiebreak.cast}`;
      after = opts.expanded
        ? `${key.expr} ${op}= ${v} and (${key.expr} ${op} ${v} or ${tiebreak.expr} ${op} ${i})`
        : `(${key.expr}, ${tiebreak.expr}) ${op} (${v}, ${i})`;
    }
  }
  params.push(page.limit + 1);
  const orderBy = tiebreak.expr === null ? `${key.expr} ${dir}` : `${key.expr} ${dir}, ${tiebreak.expr} ${dir}`;
  return { after, orderBy, limit: `$${params.length}` };
}

/** The list envelope of a page fetched with `pageSql`: up to `limit` items, and the cursor of the last one. */
export function pageOf<K, R extends K, T>(rows: R[], page: PageRequest<K>, toItem: (r: R) => T) {
  const hasMore = rows.length > page.limit;
  const shown = hasMore ? rows.slice(0, page.limit) : rows;
  const last = shown[shown.length - 1];
  return {
    data: shown.map(toItem),
    pagination: {
      limit: page.limit,
      has_more: hasMore,
      next_cursor:
        hasMore && last !== undefined
          ? encodeCursor({ sort: page.sort, value: page.key.value(last), id: tiebreakOf(page.key).of(last) })
          : null,
    },
  };
}

/**
 * Every row of a list, a page per query, for exports that stream: nothing is read ahead of what
 * the consumer takes. `first` is the first page when the caller already fetched it (an export
 * reads it before its headers go out, so that a failure is still a JSON error).
 */
export async function* eachPage<K, R extends K>(
  page: PageRequest<K>,
  load: (p: PageRequest<K>) => Promise<R[]>,
  first?: R[],
): AsyncGenerator<R[]> {
  let p = page;
  let rows = first ?? (await load(p));
  for (;;) {
    const hasMore = rows.length > p.limit;
    const shown = hasMore ? rows.slice(0, p.limit) : rows;
    yield shown;
    const last = shown[shown.length - 1];
    if (!hasMore || last === undefined) return;
    p = { ...p, after: { value: p.key.value(last), id: tiebreakOf(p.key).of(last) } };
    rows = await load(p);
  }
}

/**
 * A list nested under a resource (a product's listings): an empty page may mean that the resource
 * is not in the account, which is a 404; only then is it worth the query that asks.
 */
export async function nestedPage<P extends { data: unknown[] }>(
  page: P,
  exists: () => Promise<boolean>,
  what: string,
): Promise<P> {
  if (page.data.length === 0 && !(await exists())) throw ERRORS.notFound(what);
  return page;
}
