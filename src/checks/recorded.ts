import { evaluateCheckFailure } from '../alerts/service.js';
import type { Queryable } from '../db/types.js';
import { recordEvent } from '../events/service.js';
import { afterObservations } from '../prices/service.js';
import { outcomeOf, toCheckResult } from './schemas.js';
import type { RecordedCheck } from './sql.js';

/**
 * What follows a recorded check, in its transaction: a success's observation goes through what
 * every new observation goes through (events, alerts: src/prices/observed.ts); a failure is a
 * `listing.check_failed` event (never a price) and the account's `listing_failing` rules judge
 * the listing's failures in a row; a held reading is a `listing.price_held` event and nothing
 * else: neither a price nor a failure, so no alert rule hears of it (docs/MONITORING.md).
 */
export async function afterCheck(tx: Queryable, check: RecordedCheck): Promise<void> {
  if (check.observation_id !== null) {
    await afterObservations(tx, check.account_id, [check.observation_id]);
    return;
  }
  if (outcomeOf(check) === 'held') {
    await recordEvent(tx, check.account_id, 'listing.price_held', toCheckResult(check));
    return;
  }
  await recordEvent(tx, check.account_id, 'listing.check_failed', toCheckResult(check));
  await evaluateCheckFailure(tx, check.account_id, check.listing_id, check.consecutive_failures, check.started_at);
}
