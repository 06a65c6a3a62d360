import type { Queryable } from '../db/types.js';
import type { CheckTarget } from './leases.js';
import type { CandidateJson, CheckErrorCode, CheckRow } from './schemas.js';

/**
 * Recording a finished check. Who holds a listing (claims, leases, the lock of "check now")
 * is src/checks/leases.ts. The statement starts with a comment naming it, which
 * pg_stat_activity and pg_stat_statements show.
 *
 * The rules (docs/MONITORING.md):
 * - A check recorded as failed adds one to consecutive_failures; at FLAG_AFTER_FAILURES in a
 *   row the listing is `flagged` (still checked, with backoff), before that `failing`. A success
 *   resets it to 0 and the status to `ok`.
 * - After a success the next check is one interval later; after the n-th failure in a row,
 *   interval × 2^(n-1), capped at the larger of the interval and BACKOFF_CAP_SECONDS: retries
 *   never come sooner than the interval (politeness to a site that refuses us) and never later
 *   than a day unless the interval itself is longer.
 * - Jitter: up to 10% of that delay (at most JITTER_MAX_SECONDS) is added at random, so
 *   listings created together drift apart instead of hitting a site at the same moment forever.
 * - A site that answered 429/503 with Retry-After is not asked again sooner than that.
 * - The user's change wins over the check's schedule. While a listing is locked for a check its
 *   next_check_at equals locked_until (the claim, a renewal and lockListingForCheck set both to
 *   the lease's end); a PATCH that reschedules it (src/listings/sql.ts, updateListing: a new
 *   interval, URL, robots or browser setting, or enabling it) moves next_check_at to now. So a
 *   next_check_at other than locked_until when the check is recorded is the user's, and is kept
 *   (no sooner than a Retry-After); a listing disabled meanwhile is not rescheduled at all.
 * - listing_checks keeps the last CHECKS_KEPT rows per listing.
 */

export const FLAG_AFTER_FAILURES = 5;
export const BACKOFF_CAP_SECONDS = 86_400;
export const JITTER_MAX_SECONDS = 900;
export const CHECKS_KEPT = 50;

/**
 * A recorded listing_checks row, with the listing's status and failures in a row after it, its
 * account, and the observation recorded (null for a failed check).
 */
export type RecordedCheck = CheckRow & { listing_status: string; consecutive_failures: number; account_id: string; observation_id: number | null };

export interface CheckRecord {
  listingId: string;
  /** The settings the check used: nothing is written if the listing's changed meanwhile. */
  target: Pick<CheckTarget, 'url' | 'selector' | 'currency_override'>;
  /** The lock holder: nothing is written unless it still holds the listing. */
  lockedBy: string;
  startedAt: Date;
  /** When the page was received: the observation's observed_at and the listing's last_checked_at. */
  checkedAt: Date;
  durationMs: number;
  ok: boolean;
  httpStatus: number | null;
  finalUrl: string | null;
  /** Exact decimal text; set when ok. */
  price: string | null;
  currency: string | null;
  inStock: boolean | null;
  source: string | null;
  errorCode: CheckErrorCode | null;
  error: string | null;
  candidates: CandidateJson[];
  /** The site asked us to wait this long (429/503 Retry-After): the next check is no sooner. */
  retryAfterMs?: number | undefined;
}

/** Seconds until the next check: the interval, or the failure backoff (old consecutive_failures). */
const DELAY = `(case when $3::boolean then l.check_interval_seconds::float8
  else least(greatest(l.check_interval_seconds, ${BACKOFF_CAP_SECONDS}),
             l.check_interval_seconds * power(2, least(l.consecutive_failures, 20)))::float8 end)`;

/**
 * Records a finished check in one statement (so one short transaction, which matters with the
 * embedded database where a transaction holds the only connection): the listing's new state,
 * next_check_at (backoff and jitter computed here) and the released lock; the listing_checks
 * row; on success the price observation; and the pruning of listing_checks to CHECKS_KEPT.
 *
 * Everything hangs off the UPDATE of the listing, which matches only while `lockedBy` holds
 * it and its url, selector and currency_override are still the ones checked: a worker whose
 * lease expired and was taken over writes nothing (the new holder records its own check), nor
 * does a check of a listing deleted or re-pointed meanwhile (a price read from the old URL is
 * not the listing's price any more). Returns the listing_checks row, or null in those cases;
 * the caller then gives the lock back (unlockListing), which is a no-op if it was taken over.
 *
 * The prune runs on the statement's snapshot, which does not see the row inserted beside it,
 * so it keeps CHECKS_KEPT - 1 older rows plus the new one.
 */
export async function recordCheck(db: Queryable, c: CheckRecord): Promise<RecordedCheck | null> {
  const r = await db.query<RecordedCheck>(
    `/* recordCheck */
     with updated as (
       update listings l set
         status = case when $3::boolean then 'ok'
                       when l.consecutive_failures + 1 >= ${FLAG_AFTER_FAILURES} then 'flagged'
                       else 'failing' end,
         last_checked_at = $15::timestamptz,
         last_success_at = case when $3::boolean then $15::timestamptz else l.last_success_at end,
         last_price = case when $3::boolean then $8::numeric else l.last_price end,
         last_currency = case when $3::boolean then $9::text else l.last_currency end,
         in_stock = case when $3::boolean then $10::boolean else l.in_stock end,
         last_error = case when $3::boolean then null else $13::text end,
         consecutive_failures = case when $3::boolean then 0 else l.consecutive_failures + 1 end,
         next_check_at = case
           when not l.enabled then l.next_check_at
           when l.next_check_at is distinct from l.locked_until
             then greatest(l.next_check_at, now() + make_interval(secs => $19::float8))
           else now() + make_interval(secs => greatest(${DELAY} + random() * least(${DELAY} * 0.1, ${JITTER_MAX_SECONDS}),
                                                       coalesce($19::float8, 0))) end,
         locked_by = null,
         locked_until = null
        where l.id = $1 and l.locked_by = $2
          and l.url = $16 and l.selector is not distinct from $17::text and l.currency_override is not distinct from $18::text
       returning l.id, l.account_id, l.product_id, l.competitor_id, l.status, l.consecutive_failures
     ), chk as (
       insert into listing_checks (listing_id, started_at, duration_ms, ok, http_status, final_url, price, currency,
                                   in_stock, source, error_code, error, candidates)
       select u.id, $4::timestamptz, $5::int, $3::boolean, $6::int, $7::text, $8::numeric, $9::text,
              $10::boolean, $11::text, $12::text, $13::text, $14::jsonb
         from updated u
       returning *
     ), obs as (
       insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source)
       select u.account_id, u.product_id, u.competitor_id, u.id, $8::numeric, $9::text, $10::boolean, $15::timestamptz, 'scrape'
         from updated u
        where $3::boolean
       returning id
     ), pruned as (
       delete from listing_checks
        where listing_id = (select id from updated)
          and id in (select id from listing_checks where listing_id = $1
                      order by started_at desc, id desc offset ${CHECKS_KEPT - 1})
     )
     select chk.*, updated.status as listing_status, updated.consecutive_failures, updated.account_id,
            (select id from obs) as observation_id
       from chk, updated`,
    [
      c.listingId,
      c.lockedBy,
      c.ok,
      c.startedAt.toISOString(),
      c.durationMs,
      c.httpStatus,
      c.finalUrl,
      c.price,
      c.currency,
      c.inStock,
      c.source,
      c.errorCode,
      c.error,
      JSON.stringify(c.candidates),
      c.checkedAt.toISOString(),
      c.target.url,
      c.target.selector,
      c.target.currency_override,
      c.retryAfterMs === undefined ? null : c.retryAfterMs / 1000,
    ],
  );
  return r.rows[0] ?? null;
}
