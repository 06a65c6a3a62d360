import { iso } from '../http/fields.js';
import { internalId, publicId, type SequenceKind } from '../ids.js';

/**
 * How a list is ordered and how a page continues after its last row (keyset pagination): one
 * SortKey per sortable column. Rows are ordered by the key's expression, then by a tiebreak
 * column (the id, unless the key says otherwise), both in the same direction; a cursor carries
 * the last row's key value and tiebreak, and the next page starts strictly after that pair.
 */
export interface SortKey<R> {
  /** The SQL expression rows are ordered by (e.g. `name collate "C"`). */
  expr: string;
  /** The cast a cursor's value needs in SQL (e.g. `::timestamptz`). */
  cast: string;
  /** The value a row puts in its cursor. */
  value: (r: R) => string | number;
  /** Whether a value that came back in a cursor is one `value` could have produced (a forged one is a 400, not an SQL error). */
  accepts: (v: unknown) => boolean;
  /** What SQL compares for an accepted value, when the cursor holds another form (a public id for its bigint). */
  param?: (v: unknown) => unknown;
  /** The column that breaks ties: `id` by default. */
  tiebreak?: Tiebreak<R>;
}

export interface Tiebreak<R> {
  /** null: the key is unique by itself and `of` only labels the cursor. */
  expr: string | null;
  cast: string;
  of: (r: R) => string;
  accepts: (v: string) => boolean;
  /** What SQL compares for an accepted tiebreak, when it is not the text itself. */
  param?: (v: string) => unknown;
}

export type SortKeys<R> = Record<string, SortKey<R>>;

/** A bigint sequence column as tiebreak: the cursor holds the row's public id (src/ids.ts), never the number. */
export const sequenceTiebreak = <R>(
  kind: SequenceKind,
  column: string,
  read: (r: R) => number | string,
): Tiebreak<R> => ({
  expr: column,
  cast: '::bigint',
  of: (r) => publicId(kind, read(r)),
  accepts: (id) => internalId(kind, id) !== null,
  param: (id) => internalId(kind, id),
});

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** An RFC 3339 instant as `iso` writes it. */
export const isIsoTimestamp = (v: unknown): v is string =>
  typeof v === 'string' && TIMESTAMP.test(v) && !v.startsWith('0000') && Number.isFinite(Date.parse(v));

const isText = (v: unknown) => typeof v === 'string' && v.length <= 10_000 && !v.includes('\u0000');
const isNumericText = (v: unknown) => typeof v === 'string' && /^\d{1,15}(\.\d{1,4})?$/.test(v);

/** A timestamptz column. */
export const timestampKey = <R>(column: string, read: (r: R) => Date): SortKey<R> => ({
  expr: column,
  cast: '::timestamptz',
  value: (r) => iso(read(r)),
  accepts: isIsoTimestamp,
});

/** A text column sorted bytewise; a nullable one sorts its nulls as ''. */
export const textKey = <R>(column: string, read: (r: R) => string | null, nullable = false): SortKey<R> => ({
  expr: nullable ? `coalesce(${column}, '') collate "C"` : `${column} collate "C"`,
  cast: '::text collate "C"',
  value: (r) => read(r) ?? '',
  accepts: isText,
});

/** A numeric (money) column; the cursor holds its exact decimal text. */
export const numericKey = <R>(column: string, read: (r: R) => string): SortKey<R> => ({
  expr: column,
  cast: '::numeric',
  value: read,
  accepts: isNumericText,
});

/** `sort=field` or `sort=-field` (descending). */
export function parseSort(sort: string): { field: string; descending: boolean } {
  const descending = sort.startsWith('-');
  return { field: descending ? sort.slice(1) : sort, descending };
}

/** The `sort` values a list accepts: each field, ascending and descending. */
export const sortValues = (fields: readonly string[]) => fields.flatMap((f) => [f, `-${f}`]);
