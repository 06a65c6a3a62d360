import { compareDecimals } from '../../money/decimal.js';
import type { Candidate } from '../types.js';

/**
 * Platform markup outside the product's own block (cards of related products, recently
 * viewed...) is only trusted when every such price agrees; otherwise each is marked ignored.
 */
export function requireAgreement(candidates: Candidate[], why: string): void {
  const live = candidates.filter((c) => !c.ignored);
  const first = live[0];
  if (first && live.some((c) => compareDecimals(c.price, first.price) !== 0 || c.currency !== first.currency)) {
    for (const c of live) c.ignored = why;
  }
}

export function orderEligibleFirst(candidates: Candidate[]): Candidate[] {
  return [...candidates.filter((c) => !c.ignored), ...candidates.filter((c) => c.ignored)];
}
