/**
 * The list envelope of one keyset page. `rows` holds up to `limit + 1` rows: the extra one only
 * says that a next page exists, and is not shown. `cursorOf` encodes the last shown row.
 */
export function keysetPage<R, T>(rows: R[], limit: number, toItem: (r: R) => T, cursorOf: (last: R) => string) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    data: page.map(toItem),
    pagination: { limit, has_more: hasMore, next_cursor: hasMore && last !== undefined ? cursorOf(last) : null },
  };
}
