import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { lockListingForCheck, unlockListing } from './listing-leases.js';
import { CheckAbortedError, type CheckEngine, runCheck } from './run-check.js';
import type { RecordedCheck } from './sql.js';

/** This process, in the lock holder of a check run by the API (`api:host:pid:random`). */
const HOLDER = `api:${os.hostname()}:${process.pid}`;

/**
 * How long a check run now may hold its listing: enough for the page fetch (robots.txt first,
 * then the page, each up to FETCH_TIMEOUT_MS), at least a minute. The check is aborted a few
 * seconds before, so the lease never expires under a check still running.
 */
/** The Retry-After of the 409 answered while the listing is being checked (at most). */
export const BUSY_RETRY_AFTER_SECONDS = 2;

export const manualLeaseSeconds = (fetchTimeoutMs: number) => Math.max(60, Math.ceil((3 * fetchTimeoutMs) / 1000));

export interface CheckNowDeps extends CheckEngine {
  db: Database;
  config: Pick<Config, 'fetchTimeoutMs'>;
}

/**
 * "Check now": takes the listing's lock as a worker's claim would, runs the check (the path
 * scheduled checks take, src/checks/run-check.ts) and returns what was recorded. The lock is
 * given back on every path that records nothing.
 *
 * Throws 404 for no such listing in the account, 409 with Retry-After while a worker or another request holds it
 * or when it was changed or deleted during the check, 503 when the check took too long and was
 * abandoned.
 */
export async function checkListingNow(
  deps: CheckNowDeps,
  accountId: string,
  listingId: string,
  log: Pick<Logger, 'error'>,
): Promise<RecordedCheck> {
  const lockedBy = `${HOLDER}:${crypto.randomBytes(6).toString('hex')}`;
  const lease = manualLeaseSeconds(deps.config.fetchTimeoutMs);
  const target = await lockListingForCheck(deps.db, accountId, listingId, lockedBy, lease);
  if (target === null) throw ERRORS.notFound('Listing');
  if ('heldForSeconds' in target) {
    // Retry-After: a check is a page fetch, usually done in a second or two; the lease is only its
    // worst case. So a client waits a little and asks again (the typed client does it itself).
    throw ERRORS.inProgress(
      'The listing is being checked right now; try again in a moment',
      Math.min(target.heldForSeconds, BUSY_RETRY_AFTER_SECONDS),
    );
  }
  let row: RecordedCheck | null;
  try {
    ({ row } = await runCheck(deps, target, lockedBy, log, { signal: AbortSignal.timeout((lease - 5) * 1000) }));
  } catch (err) {
    await unlockListing(deps.db, target.id, lockedBy).catch(() => undefined);
    if (err instanceof CheckAbortedError)
      throw ERRORS.unavailable('The check took too long and was abandoned; retry shortly');
    throw err;
  }
  // Deleted, or its url, selector or currency changed while we checked: runCheck gave it back.
  if (!row) throw ERRORS.conflict('The listing was changed or deleted during the check; nothing was recorded');
  return row;
}
