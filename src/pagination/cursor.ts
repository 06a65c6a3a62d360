import { ERRORS } from '../http/errors.js';

/**
 * Opaque keyset cursors: base64url JSON of the sort it belongs to and the last row's sort value
 * and id. A cursor from another sort (or a mangled one) is a 400, never a silent restart.
 */
export interface Cursor {
  sort: string;
  value: string | number | null;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.sort, c.value, c.id])).toString('base64url');
}

/** Ids as src/ids.ts makes them: printable ASCII, so never a NUL the database would refuse. */
const ID = /^[\x21-\x7e]{1,64}$/;

/**
 * `acceptsValue` checks the sort value against what the sort column can hold, so a forged
 * cursor is refused here instead of failing as a cast in SQL (a 500).
 */
export function decodeCursor(
  text: string,
  sort: string,
  acceptsValue: (value: unknown) => boolean = () => true,
): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[2] !== 'string' ||
    !ID.test(parsed[2]) ||
    !(typeof parsed[1] === 'string' || typeof parsed[1] === 'number' || parsed[1] === null)
  ) {
    throw ERRORS.invalidRequest('The cursor is not valid; pass next_cursor from a previous page unchanged', [
      { field: 'cursor', message: 'is not a cursor this API issued' },
    ]);
  }
  if (parsed[0] !== sort) {
    throw ERRORS.invalidRequest('The cursor belongs to another sort order', [
      { field: 'cursor', message: `was issued for sort=${parsed[0]}` },
    ]);
  }
  if (!acceptsValue(parsed[1])) {
    throw ERRORS.invalidRequest('The cursor is not valid; pass next_cursor from a previous page unchanged', [
      { field: 'cursor', message: 'is not a cursor this API issued' },
    ]);
  }
  return { sort, value: parsed[1] as Cursor['value'], id: parsed[2] };
}
