import type { Queryable } from '../db/types.js';
import type { Hold, HoldState } from './hold.js';
import type { CheckTarget } from './listing-leases.js';
import type { CandidateJson, CheckErrorCode, CheckRow } from './schemas.js';

/**
 * Recording a finished check. Who holds a listing (claims, leases, the lock of "check now")
 * is src/checks/listing-leases.ts. The statement starts with a comment naming it, which
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
 * - A held reading (src/checks/hold.ts) is no verdict: it leaves status, failures in a row,
 *   last_error and the last price as they were, sets last_checked_at, becomes the listing's
 *   held_check_id, and brings the next check to HOLD_RECHECK_SECONDS from now (unless the user
 *   rescheduled meanwhile, as above). Recording a price clears held_check_id and the rejected
 *   reading; a failure leaves both.
 */

export const FLAG_AFTER_FAILURES = 5;
export const BACKOFF_CAP_SECONDS = 86_400;
export const JITTER_MAX_SECONDS = 900;
export const CHECKS_KEPT = 50;

/**
 * A recorded listing_checks row, with the listing's status and failures in a row after it, its
 * account, and the observation recorded (null for a failed check).
 */
export type RecordedCheck = CheckRow & {
  listing_status: string;
  consecutive_failures: number;
  account_id: string;
  observation_id: number | null;
};

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
  /** The reading is held (`ok` is false): why, and whether the next check comes within minutes. */
  held?: { hold: Hold; recheckSeconds: number | null } | undefined;
  /** The reading is the listing's pending held reading read again (`ok` is true): that check confirmed. */
  confirms?: { heldId: string; hold: Hold } | undefined;
}

/** Seconds until the next check: the interval (a success or a held reading), or the failure backoff (old consecutive_failures). */
const DELAY = `(case when $3::boolean or $20::boolean then l.check_interval_seconds::float8
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
  const hold = c.held?.hold ?? c.confirms?.hold ?? null;
  const r = await db.query<RecordedCheck>(
    // The check's id is drawn first (a volatile CTE runs once), so that the listing can name its
    // held reading and a confirmed held check its confirmation in this same statement.
    `/* recordCheck */
     with new_check as (
       select nextval(pg_get_serial_sequence('listing_checks', 'id')) as id
     ), updated as (
       update listings l set
         status = case when $3::boolean then 'ok'
                       when $20::boolean then l.status
                       when l.consecutive_failures + 1 >= ${FLAG_AFTER_FAILURES} then 'flagged'
                       else 'failing' end,
         last_checked_at = $15::timestamptz,
         last_success_at = case when $3::boolean then $15::timestamptz else l.last_success_at end,
         last_price = case when $3::boolean then $8::numeric else l.last_price end,
         last_currency = case when $3::boolean then $9::text else l.last_currency end,
         in_stock = case when $3::boolean then $10::boolean else l.in_stock end,
         last_error = case when $3::boolean then null when $20::boolean then l.last_error else $13::text end,
         consecutive_failures = case when $3::boolean then 0 when $20::boolean then l.consecutive_failures else l.consecutive_failures + 1 end,
         next_check_at = case
           when not l.enabled then l.next_check_at
           when l.next_check_at is distinct from l.locked_until
             then greatest(l.next_check_at, now() + make_interval(secs => $19::float8))
           when $26::float8 is not null then now() + make_interval(secs => $26::float8)
           else now() + make_interval(secs => greatest(${DELAY} + random() * least(${DELAY} * 0.1, ${JITTER_MAX_SECONDS}),
                                                       coalesce($19::float8, 0))) end,
         held_check_id = case when $20::boolean then (select id from new_check) when $3::boolean then null else l.held_check_id end,
         rejected_price = case when $3::boolean then null else l.rejected_price end,
         rejected_currency = case when $3::boolean then null else l.rejected_currency end,
         locked_by = null,
         locked_until = null
        where l.id = $1 and l.locked_by = $2
          and l.url = $16 and l.selector is not distinct from $17::text and l.currency_override is not distinct from $18::text
       returning l.id, l.account_id, l.product_id, l.competitor_id, l.status, l.consecutive_failures, l.held_check_id
     ), chk as (
       insert into listing_checks (id, listing_id, started_at, duration_ms, ok, http_status, final_url, price, currency,
                                   in_stock, source, error_code, error, candidates,
                                   held_reason, held_previous_price, held_previous_currency, held_factor, read_at,
                                   confirmed_by, resolved_at)
       overriding system value
       select (select id from new_check), u.id, $4::timestamptz, $5::int, $3::boolean, $6::int, $7::text, $8::numeric, $9::text,
              $10::boolean, $11::text, $12::text, $13::text, $14::jsonb,
              $21::text, $22::numeric, $23::text, $24::float8, case when $20::boolean then $15::timestamptz end,
              $25::bigint, case when $25::bigint is not null then now() end
         from updated u
       returning *
     ), confirmed as (
       update listing_checks set held_resolution = 'confirmed', resolved_at = now(), confirmed_by = (select id from new_check)
        where id = $25::bigint and listing_id = $1 and exists (select 1 from updated)
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
     select chk.*, coalesce(updated.held_check_id = chk.id, false) as held_pending,
            updated.status as listing_status, updated.consecutive_failures, updated.account_id,
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
      c.held !== undefined,
      hold?.reason ?? null,
      hold?.previousPrice ?? null,
      hold?.previousCurrency ?? null,
      hold?.factor ?? null,
      c.confirms?.heldId ?? null,
      c.held?.recheckSeconds ?? null,
    ],
  );
  return r.rows[0] ?? null;
}

/**
 * What decides whether a reading is held (src/checks/hold.ts): the listing's last price, its
 * hold_factor, its pending held reading and the reading a person rejected. Read in the
 * transaction that records the check, while `lockedBy` still holds the listing; the row lock
 * (FOR NO KEY UPDATE, what recordCheck's UPDATE takes anyway) keeps an accept or reject
 * (src/checks/held.ts) from changing them before the check is recorded. undefined when
 * `lockedBy` no longer holds it (recordCheck will then record nothing).
 */
export async function readHoldState(
  db: Queryable,
  listingId: string,
  lockedBy: string,
): Promise<HoldState | undefined> {
  const r = await db.query<HoldState>(
    `/* readHoldState */
     select l.last_price::text as last_price, l.last_currency, l.hold_factor,
            l.rejected_price::text as rejected_price, l.rejected_currency,
            k.id::text as held_id, k.price::text as held_price, k.currency as held_currency, k.held_reason,
            k.held_previous_price::text as held_previous_price, k.held_previous_currency, k.held_factor
       from listings l
       left join listing_checks k on k.id = l.held_check_id and k.listing_id = l.id
      where l.id = $1 and l.locked_by = $2
        for no key update of l`,
    [listingId, lockedBy],
  );
  return r.rows[0];
}

// ---- A person's answer to a held reading (src/checks/held.ts) ----

/** A check of the listing, with whether it is the listing's pending held reading. */
export async function getListingCheck(
  db: Queryable,
  listingId: string,
  checkId: string,
): Promise<CheckRow | undefined> {
  const r = await db.query<CheckRow>(
    `/* getListingCheck */
     select k.*, coalesce(l.held_check_id = k.id, false) as held_pending
       from listing_checks k join listings l on l.id = k.listing_id
      where k.id = $2::bigint and k.listing_id = $1`,
    [listingId, checkId],
  );
  return r.rows[0];
}

/**
 * Locks the account's listing for an answer to its held reading (FOR NO KEY UPDATE, as a
 * recording check does: the two take turns). undefined: no such listing in the account.
 */
export async function lockListingForAnswer(
  db: Queryable,
  accountId: string,
  listingId: string,
): Promise<{ id: string } | undefined> {
  const r = await db.query<{ id: string }>(
    `/* lockListingForAnswer */ select id from listings where id = $1 and account_id = $2 for no key update`,
    [listingId, accountId],
  );
  return r.rows[0];
}

/**
 * The early recheck of a held reading is not needed once a person has answered: an enabled
 * listing that no check holds goes back to its schedule, one interval after the held reading
 * (or later, if it was already due later: a failure's backoff, a reading held without recheck).
 */
const BACK_TO_SCHEDULE = `case when l.enabled and l.locked_by is null
  then greatest(l.next_check_at, k.read_at + make_interval(secs => l.check_interval_seconds::float8))
  else l.next_check_at end`;

/**
 * Accepts the listing's pending held reading `checkId`: records it as the check would have, with
 * the held check's time (an observation with observed_at = read_at, the listing's last price and
 * stock), and marks the check accepted. When no check came after it, the listing's state is
 * that of a success (status ok, no failures); a failure since it stands. The caller holds the
 * listing's lock (lockListingForAnswer) and has checked that `checkId` is pending.
 */
export async function acceptHeldCheck(
  db: Queryable,
  listingId: string,
  checkId: string,
): Promise<CheckRow & { account_id: string; observation_id: number }> {
  const r = await db.query<CheckRow & { account_id: string; observation_id: number }>(
    `/* acceptHeldCheck */
     with k as (
       select id, price, currency, in_stock, read_at,
              exists (select 1 from listing_checks n where n.listing_id = $1 and n.id > $2::bigint) as later
         from listing_checks where id = $2::bigint and listing_id = $1
     ), updated as (
       update listings l set
         last_price = k.price, last_currency = k.currency, in_stock = k.in_stock,
         last_success_at = greatest(l.last_success_at, k.read_at),
         status = case when k.later then l.status else 'ok' end,
         consecutive_failures = case when k.later then l.consecutive_failures else 0 end,
         last_error = case when k.later then l.last_error else null end,
         held_check_id = null, rejected_price = null, rejected_currency = null,
         next_check_at = ${BACK_TO_SCHEDULE}
         from k
        where l.id = $1 and l.held_check_id = k.id
       returning l.id, l.account_id, l.product_id, l.competitor_id
     ), obs as (
       insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source)
       select u.account_id, u.product_id, u.competitor_id, u.id, k.price, k.currency, k.in_stock, k.read_at, 'scrape'
         from updated u, k
       returning id
     )
     update listing_checks c set held_resolution = 'accepted', resolved_at = now()
       from updated u
      where c.id = $2::bigint
     returning c.*, false as held_pending, u.account_id, (select id from obs) as observation_id`,
    [listingId, checkId],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`held check ${checkId} of ${listingId} was not pending`);
  return row;
}

/**
 * Rejects the listing's pending held reading `checkId`: nothing is recorded; the reading is
 * remembered as rejected (read again, it is held again, src/checks/hold.ts) and the listing goes
 * back to its schedule. Same preconditions as acceptHeldCheck.
 */
export async function rejectHeldCheck(db: Queryable, listingId: string, checkId: string): Promise<CheckRow> {
  const r = await db.query<CheckRow>(
    `/* rejectHeldCheck */
     with k as (
       select id, price, currency, read_at from listing_checks where id = $2::bigint and listing_id = $1
     ), updated as (
       update listings l set
         held_check_id = null, rejected_price = k.price, rejected_currency = k.currency,
         next_check_at = ${BACK_TO_SCHEDULE}
         from k
        where l.id = $1 and l.held_check_id = k.id
       returning l.id
     )
     update listing_checks c set held_resolution = 'rejected', resolved_at = now()
       from updated u
      where c.id = $2::bigint
     returning c.*, false as held_pending`,
    [listingId, checkId],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`held check ${checkId} of ${listingId} was not pending`);
  return row;
}
