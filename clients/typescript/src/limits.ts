/**
 * Limits of the service that are not in its OpenAPI document as values a program can read (the
 * document states them in words). They change with the service's code: a test of the service
 * (test/client/limits.test.ts) checks that these are its own.
 */

/** Items one batch request takes (POST /products/batch, POST /prices). */
export const BATCH_MAX = 1000;

/** The largest page of a list (`limit`), and the client's default page size when paginating. */
export const PAGE_SIZE_MAX = 100;

/** Observations in one page of `interval=raw` history (its `limit`). */
export const RAW_PAGE_MAX = 1000;

/** The longest `to - from` a price history request may ask for, in days, per `interval`. */
export const HISTORY_MAX_SPAN_DAYS = { raw: 366, hour: 31, day: 1100, week: 3660, month: 36_600 } as const;
