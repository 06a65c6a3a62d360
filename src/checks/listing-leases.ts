import type { Queryable } from '../db/types.js';

/**
 * Who holds a listing, in one place: every statement that claims, renews, locks, unlocks or
 * releases one, and the notification that wakes the workers. Recording a finished check, which
 * releases the lock too, is src/checks/sql.ts (recordCheck). Each statement starts with a
 * comment naming it, which pg_stat_activity and pg_stat_statements show.
 *
 * The schedule is the listings table itself: a listing is due when it is enabled, its
 * next_check_at has passed and no live lease holds it. Workers claim due listings with
 * FOR UPDATE SKIP LOCKED, so any number of worker processes share them and none checks a
 * listing another holds; "check now" takes the same lock on one listing. While a listing is
 * held its next_check_at equals locked_until, so that recording can tell a reschedule by the
 * user during the check (src/checks/sql.ts). See docs/MONITORING.md.
 */

/** What a check needs to know about its listing (the claim and the manual lock return it). */
export interface CheckTarget {
  id: string;
  url: string;
  selector: string | null;
  currency_override: string | null;
  respect_robots: boolean;
  render_js: boolean;
  /** Read the price the page shows when it has no structured one (the visible-price finder). */
  visible_fallback: boolean;
  /** The competitor's proxy, if any. */
  proxy_url: string | null;
}

/** The columns of CheckTarget, for a RETURNING clause on `listings l`. */
export const CHECK_TARGET_COLUMNS = `l.id, l.url, l.selector, l.currency_override, l.respect_robots, l.render_js, l.visible_fallback,
  (select c.proxy_url from competitors c where c.id = l.competitor_id) as proxy_url`;

/** NOTIFY channel: "a listing may have become due earlier than the schedule said". */
export const LISTINGS_DUE_CHANNEL = 'pricehound_listings_due';

/**
 * Wakes the workers at once instead of at their next poll: call it after creating or enabling a
 * listing, or moving its next_check_at to now (inside the caller's transaction is fine: the
 * notification is delivered on commit). Workers also poll, so forgetting it only costs latency.
 */
export async function notifyListingsDue(db: Queryable): Promise<void> {
  await db.query(`/* notifyListingsDue */ select pg_notify($1, '')`, [LISTINGS_DUE_CHANNEL]);
}

/**
 * Claims up to `limit` due listings for `workerId` in one statement, oldest due first, and
 * returns what their checks need.
 *
 * The claim sets locked_until and next_check_at both to now + lease: while the check runs, the
 * listing is no longer due, so other claims' index scans (listings_due) do not walk over it, and
 * if the worker dies, the listing becomes due again exactly when its lease expires. Recording the
 * check (recordCheck, src/checks/sql.ts) sets the real next_check_at and clears the lock. The
 * lock condition is checked as well, for a listing whose next_check_at someone moved to now
 * while it was held.
 *
 * Two claims racing for one row: the SELECT skips rows another transaction has locked; a row
 * claimed and committed after this statement's snapshot is re-read by FOR UPDATE (READ
 * COMMITTED re-checks the WHERE clause against the new version), finds it no longer due and
 * skips it.
 */
export async function claimDueListings(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<CheckTarget[]> {
  const r = await db.query<CheckTarget>(
    `/* claimDueListings */
     update listings l
        set locked_by = $1,
            locked_until = now() + make_interval(secs => $3::float8),
            next_check_at = now() + make_interval(secs => $3::float8)
       from (select id from listings
              where enabled and next_check_at <= now()
                and (locked_until is null or locked_until <= now())
              order by next_check_at
              limit $2
              for update skip locked) due
      where l.id = due.id
     returning ${CHECK_TARGET_COLUMNS}`,
    [workerId, limit, leaseSeconds],
  );
  return r.rows;
}

/**
 * Extends the leases `workerId` holds on `ids` (checks still running) and returns the ids it
 * still holds; a missing one was taken over after its lease expired (or deleted), so its check
 * can be abandoned: its result would not be recorded. next_check_at follows the lease only while
 * it still equals locked_until: one the user moved meanwhile is theirs (src/checks/sql.ts).
 */
export async function renewLeases(
  db: Queryable,
  workerId: string,
  ids: string[],
  leaseSeconds: number,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await db.query<{ id: string }>(
    `/* renewLeases */
     update listings
        set locked_until = now() + make_interval(secs => $3::float8),
            next_check_at = case when next_check_at = locked_until then now() + make_interval(secs => $3::float8)
                                 else next_check_at end
      where id = any($2::text[]) and locked_by = $1
     returning id`,
    [workerId, ids, leaseSeconds],
  );
  return r.rows.map((row) => row.id);
}

/**
 * Takes the lock of one listing of the account for a check run now, if nobody holds it.
 * `{ heldForSeconds }`: a worker (or another "check now") holds it, for at most that long
 * (whole seconds, at least 1); null: no such listing in the account.
 * The condition on the lock is on the updated row itself, so of two concurrent callers the
 * second re-reads the row the first locked (READ COMMITTED re-check) and gets `heldForSeconds`.
 * An enabled listing's next_check_at moves to the lease's end with the lock, as a worker's claim
 * does, so that recordCheck can tell a reschedule by the user during the check (src/checks/sql.ts).
 */
export async function lockListingForCheck(
  db: Queryable,
  accountId: string,
  listingId: string,
  lockedBy: string,
  leaseSeconds: number,
): Promise<CheckTarget | { heldForSeconds: number } | null> {
  const r = await db.query<CheckTarget>(
    `/* lockListingForCheck */
     update listings l
        set locked_by = $3, locked_until = now() + make_interval(secs => $4::float8),
            next_check_at = case when l.enabled then now() + make_interval(secs => $4::float8) else l.next_check_at end
      where l.id = $1 and l.account_id = $2
        and (l.locked_until is null or l.locked_until <= now())
     returning ${CHECK_TARGET_COLUMNS}`,
    [listingId, accountId, lockedBy, leaseSeconds],
  );
  if (r.rows[0]) return r.rows[0];
  const held = await db.query<{ held_for: number | string }>(
    `/* listingLockLeft */
     select greatest(1, ceil(extract(epoch from (locked_until - now()))))::int as held_for
       from listings where id = $1 and account_id = $2`,
    [listingId, accountId],
  );
  return held.rows[0] ? { heldForSeconds: Number(held.rows[0].held_for) } : null;
}

/**
 * Gives up a lock without recording anything (a check abandoned at shutdown, an aborted request,
 * a result discarded because the listing changed). The listing is due at once unless the user
 * rescheduled it meanwhile (then their time stands): the check it was locked for did not happen.
 */
export async function unlockListing(db: Queryable, listingId: string, lockedBy: string): Promise<void> {
  await db.query(
    `/* unlockListing */
     update listings
        set locked_by = null, locked_until = null,
            next_check_at = case when enabled and next_check_at = locked_until then now() else next_check_at end
      where id = $1 and locked_by = $2`,
    [listingId, lockedBy],
  );
}

/**
 * Gives back the listings `workerId` still holds (all, or those of `ids`): checks abandoned at
 * shutdown, or claimed just as it began. Due at once, so that another worker takes them now
 * rather than when the lease would have expired.
 */
export async function releaseLeases(db: Queryable, workerId: string, ids?: string[]): Promise<number> {
  const r = await db.query(
    `/* releaseLeases */
     update listings set locked_by = null, locked_until = null, next_check_at = now()
      where locked_by = $1 and ($2::text[] is null or id = any($2::text[]))`,
    [workerId, ids ?? null],
  );
  return r.rowCount;
}

/**
 * Clears every lease. Only for the embedded database at start-up: one process owns DATA_DIR,
 * so any lease found then was left by a previous run that died, and waiting for it to expire
 * would only delay those checks.
 */
export async function releaseStaleLeases(db: Queryable): Promise<number> {
  const r = await db.query(
    `/* releaseStaleLeases */
     update listings set locked_by = null, locked_until = null, next_check_at = least(next_check_at, now())
      where locked_by is not null`,
  );
  return r.rowCount;
}
