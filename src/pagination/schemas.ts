import { type TSchema, Type } from 'typebox';
import { DEFAULT_LIMIT } from './page.js';
import { sortValues } from './sort.js';

/** The query parameters and the envelope every list shares (docs/API-DECISIONS.md, "Lists"). */

/**
 * A cursor carries the last row's sort value; sorting by a 200-character name gives up to ~1.7 KB
 * of base64url JSON (4-byte emoji, control characters escaped to 6 bytes), hence 2048.
 */
export const CURSOR_MAX = 2048;

export const PaginationSchema = Type.Object(
  {
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100 }),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String({ maxLength: CURSOR_MAX, pattern: '^[A-Za-z0-9_-]+$' }), Type.Null()], {
      description: 'Pass as `cursor` to get the next page; null on the last page',
    }),
  },
  { additionalProperties: false },
);

export function listOf<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    { data: Type.Array(item, { maxItems: 100 }), pagination: PaginationSchema },
    { title, additionalProperties: false },
  );
}

export const LimitQuery = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: 100,
  default: DEFAULT_LIMIT,
  description: 'Page size, 1 to 100',
});
export const CursorQuery = Type.String({
  minLength: 1,
  maxLength: CURSOR_MAX,
  description: '`next_cursor` of the previous page',
});

/** `sort`: each of `fields`, ascending or with `-` descending. */
export const SortQuery = (fields: readonly string[], defaultSort: string) =>
  Type.String({
    enum: sortValues(fields),
    default: defaultSort,
    description: 'Sort field; prefix with `-` for descending. Ties are broken by id.',
  });
