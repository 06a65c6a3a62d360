import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Database, Queryable } from '../db/types.js';
import type { Extraction } from '../extraction/index.js';
import type { BrowserFetchRequest } from '../fetcher/browser/index.js';
import { FetchError, type Fetcher, type FetchResult } from '../fetcher/types.js';
import { lockListingSeries } from '../prices/service.js';
import type { Extractor } from './extractor.js';
import { decideHold, HOLD_RECHECK_SECONDS, type HoldDecision } from './hold.js';
import { type CheckTarget, unlockListing } from './listing-leases.js';
import { type CandidateJson, type CheckErrorCode, MAX_CANDIDATES, toCandidateJson } from './schemas.js';
import { afterCheck } from './recorded.js';
import { readHoldState, type RecordedCheck, recordCheck } from './sql.js';

/** What fetching and reading a page gave, before anything is saved. */
export interface CheckOutcome {
  startedAt: Date;
  /** When the page was received (or the fetch failed). */
  checkedAt: Date;
  durationMs: number;
  ok: boolean;
  /** The response, without its body; null when none came. */
  fetch: Omit<FetchResult, 'body'> | null;
  /** The response's status, also when the fetcher refused it (an HTTP error it reports by status). */
  httpStatus: number | null;
  extraction: Extraction | null;
  /** Exact decimal text. */
  price: string | null;
  currency: string | null;
  inStock: boolean | null;
  source: string | null;
  error: { code: CheckErrorCode; message: string } | null;
  candidates: CandidateJson[];
  /** The site asked us to come back no sooner than this (FetchError.retryAfterMs). */
  retryAfterMs?: number;
  /** A non-FetchError thrown by the fetcher or the extractor (a bug): for the caller to log. */
  bug?: unknown;
}

/** What a check runs on: the page fetcher and the extraction engine (src/runtime.ts builds both). */
export interface CheckEngine {
  fetcher: Fetcher;
  extractor: Extractor;
}

/** Thrown when the caller's signal aborted the check: nothing is to be recorded. */
export class CheckAbortedError extends Error {
  constructor() {
    super('check aborted');
    this.name = 'CheckAbortedError';
  }
}

/**
 * Fetches the page and reads its price: the part of a check that saves nothing, shared by
 * scheduled checks, "check now" and the `POST /extract` dry run. Never throws except
 * CheckAbortedError: every failure is an outcome with an error code.
 *
 * The price recorded is the extractor's chosen candidate; with none, the check fails with the
 * extractor's reason (never a guess). The currency is the listing's override, else the one the
 * page states; with neither, the check fails (`unknown_currency`).
 */
export async function performCheck(
  { fetcher, extractor }: CheckEngine,
  target: Omit<CheckTarget, 'id'>,
  signal?: AbortSignal,
): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const done = (
    o: Omit<CheckOutcome, 'startedAt' | 'checkedAt' | 'durationMs'>,
    checkedAt = new Date(),
  ): CheckOutcome => ({
    startedAt,
    checkedAt,
    durationMs: Math.round(performance.now() - t0),
    ...o,
  });
  const failed = (code: CheckErrorCode, message: string, rest: Partial<CheckOutcome> = {}) =>
    done({
      ok: false,
      fetch: null,
      httpStatus: rest.fetch?.status ?? null,
      extraction: null,
      price: null,
      currency: null,
      inStock: null,
      source: null,
      candidates: [],
      error: { code, message },
      ...rest,
    });

  let page: FetchResult;
  try {
    const req: BrowserFetchRequest = {
      url: target.url,
      proxyUrl: target.proxy_url,
      respectRobots: target.respect_robots,
      renderJs: target.render_js,
      // A browser waits for the element holding the price before it takes the page.
      waitForSelector: target.render_js ? target.selector : null,
      ...(signal ? { signal } : {}),
    };
    page = await fetcher.fetch(req);
  } catch (err) {
    if (signal?.aborted) throw new CheckAbortedError();
    if (err instanceof FetchError) {
      return failed(err.code, err.message, {
        httpStatus: err.status ?? null,
        ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
      });
    }
    return failed('internal', 'The page could not be fetched because of an internal error; it is logged', { bug: err });
  }
  if (signal?.aborted) throw new CheckAbortedError();
  const checkedAt = new Date();
  const { body, ...fetch } = page;
  if (page.status >= 400) {
    return failed('http_error', `The page answered HTTP ${page.status}`, { fetch, checkedAt });
  }

  let extraction: Extraction;
  try {
    extraction = await extractor.extract(body, {
      ...(target.selector ? { selector: target.selector } : {}),
      ...(target.currency_override ? { currencyOverride: target.currency_override } : {}),
      ...(target.visible_fallback === false ? { visibleFallback: false } : {}),
      baseUrl: page.finalUrl,
    });
  } catch (err) {
    return failed('internal', 'The page could not be read because of an internal error; it is logged', {
      fetch,
      checkedAt,
      bug: err,
    });
  }
  const candidates = extraction.candidates
    .slice(0, MAX_CANDIDATES)
    .map((c) => toCandidateJson(c, c === extraction.chosen));
  const inStock = (chosenInStock: boolean | undefined) =>
    chosenInStock ?? (extraction.availability === 'unknown' ? null : extraction.availability === 'in_stock');
  const chosen = extraction.chosen;
  if (!chosen) {
    return done(
      {
        ok: false,
        fetch,
        httpStatus: fetch.status,
        extraction,
        price: null,
        currency: null,
        inStock: inStock(undefined),
        source: null,
        candidates,
        error: { code: 'no_price', message: extraction.failure ?? 'No price found on the page' },
      },
      checkedAt,
    );
  }
  const currency = target.currency_override ?? chosen.currency ?? null;
  if (currency === null) {
    return done(
      {
        ok: false,
        fetch,
        httpStatus: fetch.status,
        extraction,
        price: null,
        currency: null,
        inStock: inStock(chosen.inStock),
        source: chosen.source,
        candidates,
        error: {
          code: 'unknown_currency',
          message: `Found the price ${chosen.price} (${chosen.source}) but the page does not say its currency; set the listing's currency_override`,
        },
      },
      checkedAt,
    );
  }
  return done(
    {
      ok: true,
      fetch,
      httpStatus: fetch.status,
      extraction,
      price: chosen.price,
      currency,
      inStock: inStock(chosen.inStock),
      source: chosen.source,
      candidates,
      error: null,
    },
    checkedAt,
  );
}

/**
 * Records an outcome for a listing `lockedBy` holds (src/checks/sql.ts): null when it no longer
 * does, or the listing's url, selector or currency changed since the check began. A price read
 * is first judged against the listing's state (src/checks/hold.ts): one that cannot be right is
 * held, not recorded.
 */
async function recordOutcome(
  db: Queryable,
  target: CheckTarget,
  lockedBy: string,
  outcome: CheckOutcome,
): Promise<RecordedCheck | null> {
  let decision: HoldDecision = { kind: 'record' };
  if (outcome.ok && outcome.price !== null && outcome.currency !== null) {
    const state = await readHoldState(db, target.id, lockedBy);
    if (state) decision = decideHold(outcome.price, outcome.currency, state);
  }
  return recordCheck(db, {
    listingId: target.id,
    target,
    lockedBy,
    startedAt: outcome.startedAt,
    checkedAt: outcome.checkedAt,
    durationMs: outcome.durationMs,
    ok: outcome.ok && decision.kind !== 'hold',
    held:
      decision.kind === 'hold'
        ? { hold: decision.hold, recheckSeconds: decision.recheck ? HOLD_RECHECK_SECONDS : null }
        : undefined,
    confirms: decision.kind === 'confirm' ? { heldId: decision.heldId, hold: decision.hold } : undefined,
    httpStatus: outcome.httpStatus,
    finalUrl: outcome.fetch?.finalUrl ?? null,
    price: outcome.price,
    currency: outcome.currency,
    inStock: outcome.inStock,
    source: outcome.source,
    errorCode: outcome.error?.code ?? null,
    error: outcome.error?.message ?? null,
    candidates: outcome.candidates,
    retryAfterMs: outcome.retryAfterMs,
  });
}

export interface RunCheckOptions {
  /** Abandons the check while the page is fetched: runCheck throws CheckAbortedError, nothing is recorded. */
  signal?: AbortSignal | undefined;
  /**
   * Called once the page has been read, as recording begins: from then on aborting changes
   * nothing (the worker stops treating a lost lease as a reason to abort).
   */
  onRecording?: (() => void) | undefined;
}

/**
 * A whole check of a listing its caller holds the lock of, the one path of scheduled checks
 * (src/checks/worker.ts) and "check now" (src/checks/check-now.ts): fetch and extract outside
 * any transaction, then, in one short transaction, judge a price read against the listing's last
 * (held or recorded: src/checks/hold.ts), record the outcome, and what follows from it (events,
 * alerts: src/checks/recorded.ts). Returns the outcome and the
 * recorded listing_checks row with the listing's new status, or null when nothing was recorded:
 * the lock was lost, or the listing was deleted or re-pointed meanwhile; the listing is then
 * given back (a no-op for a lock taken over). An internal error of the fetcher or the extractor
 * is recorded as a failed check and logged here.
 *
 * Throws CheckAbortedError when `signal` aborted the fetch, and whatever the database threw;
 * the lock is then the caller's to give back or to let expire.
 */
export async function runCheck(
  deps: CheckEngine & { db: Database },
  target: CheckTarget,
  lockedBy: string,
  log: Pick<Logger, 'error'>,
  opts: RunCheckOptions = {},
): Promise<{ outcome: CheckOutcome; row: RecordedCheck | null }> {
  const outcome = await performCheck(deps, target, opts.signal);
  opts.onRecording?.();
  const row = await deps.db.transaction(async (tx) => {
    // A price is about to join its series: take the series' turn first (src/prices/series-lock.ts).
    if (outcome.ok) await lockListingSeries(tx, target.id);
    const recorded = await recordOutcome(tx, target, lockedBy, outcome);
    if (recorded) await afterCheck(tx, recorded);
    return recorded;
  });
  if (outcome.bug) log.error({ err: outcome.bug, listing_id: target.id }, 'check failed on an internal error');
  if (!row) await unlockListing(deps.db, target.id, lockedBy);
  return { outcome, row };
}
