import { ERRORS } from '../http/errors.js';

/**
 * Two filters that bound a range (`created_after`/`created_before`, `min_price`/`max_price`,
 * `since`/`until`): `lower` must come before `upper`, strictly for instants, at most for
 * numbers. Every list asks it in the same words.
 */
export function checkRange<Q extends object>(q: Q, lower: keyof Q & string, upper: keyof Q & string): void {
  const lo = q[lower] as unknown;
  const hi = q[upper] as unknown;
  if (lo === undefined || hi === undefined) return;
  if (typeof lo === 'number' && typeof hi === 'number') {
    if (lo > hi) throw ERRORS.invalidQuery([{ field: lower, message: `must not be greater than ${upper}` }]);
    return;
  }
  if (Date.parse(String(lo)) >= Date.parse(String(hi)))
    throw ERRORS.invalidQuery([{ field: lower, message: `must be before ${upper}` }]);
}

/** `%text%` for ILIKE, with the pattern's own characters escaped. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
