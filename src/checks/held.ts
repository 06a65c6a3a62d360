import type { Database } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { internalId, publicId } from '../ids.js';
import { afterObservations } from '../prices/service.js';
import { lockListingSeries } from '../prices/service.js';
import { type CheckRow, outcomeOf, toCheckResult } from './schemas.js';
import { acceptHeldCheck, getListingCheck, lockListingForAnswer, rejectHeldCheck } from './sql.js';

/**
 * A person's answer to a held reading (design/API.md "Checks: a price that cannot be right is
 * held"): `POST /listings/{id}/checks/{check_id}/accept` records it with the held check's time,
 * `.../reject` drops it. Only the listing's pending held reading can be answered, once; anything
 * else is a 409 that says what became of the check, and changes nothing.
 */
export type HeldAnswer = 'accept' | 'reject';

/** Why `check` cannot be answered, or null when it is the listing's pending held reading. */
function refusal(check: CheckRow, answer: HeldAnswer): string | null {
  const outcome = outcomeOf(check);
  const only = `only a held reading still waiting for its recheck can be ${answer}ed`;
  if (outcome === 'recorded') return `This check recorded its price: there is nothing to ${answer}; ${only}`;
  if (outcome === 'failed') return `This check failed and read no price: there is nothing to ${answer}; ${only}`;
  if (check.held_resolution === 'accepted')
    return `This held reading was already accepted and recorded${check.resolved_at ? ` at ${check.resolved_at.toISOString()}` : ''}`;
  if (check.held_resolution === 'rejected')
    return `This held reading was already rejected${check.resolved_at ? ` at ${check.resolved_at.toISOString()}` : ''}`;
  if (check.held_resolution === 'confirmed') {
    const by = check.confirmed_by === null ? 'the next check' : `check ${publicId('chk', check.confirmed_by)}`;
    return `This held reading was already recorded: ${by} read the same price again`;
  }
  if (!check.held_pending)
    return `A later check replaced this held reading (it recorded or held another price, or the listing was re-pointed); ${only}`;
  return null;
}

/**
 * Answers the held reading `checkPublicId` of the account's listing `listingId`, in one
 * transaction that holds the listing's row lock (a check being recorded waits, and sees the
 * answer). Accepting goes through what every new observation goes through (price.changed,
 * alerts: src/prices/observed.ts). Returns the check as it is now.
 *
 * Throws 404 for a listing not in the account or a check not of that listing, 409 for a check
 * that is not the listing's pending held reading.
 */
export async function answerHeldCheck(
  db: Database,
  accountId: string,
  listingId: string,
  checkPublicId: string,
  answer: HeldAnswer,
) {
  const checkId = internalId('chk', checkPublicId);
  const row = await db.transaction(async (tx) => {
    // An accepted reading joins the series: its turn is taken first, as a check takes it before the listing (src/prices/series-lock.ts).
    if (answer === 'accept') await lockListingSeries(tx, listingId, accountId);
    if (!(await lockListingForAnswer(tx, accountId, listingId))) throw ERRORS.notFound('Listing');
    const check = checkId === null ? undefined : await getListingCheck(tx, listingId, checkId);
    if (!check || checkId === null) throw ERRORS.notFound('Check');
    const why = refusal(check, answer);
    if (why !== null) throw ERRORS.conflict(why);
    if (answer === 'reject') return rejectHeldCheck(tx, listingId, checkId);
    const accepted = await acceptHeldCheck(tx, listingId, checkId);
    await afterObservations(tx, accepted.account_id, [accepted.observation_id]);
    return accepted;
  });
  return toCheckResult(row);
}
