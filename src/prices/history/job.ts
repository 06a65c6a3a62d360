import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { DAY_MS } from '../../time.js';
import { ANALYZE_AFTER_ROWS, cacheRun } from '../passes.js';
import { buildLocalDays, LOCAL_DAY_BATCH_PRODUCTS } from './local-days.js';
import { buildMonthTexts, MONTH_TEXT_BATCH_PRODUCTS } from './month-texts.js';

/** A run looks this far back for local days to build: those ended since the last run, and those late data dropped. */
const RECENT_MS = 3 * DAY_MS;

/**
 * The periodic build of the local days of `zones` (every hour, as each zone's day ends at its own
 * UTC hour: those of the last 3 days are looked at), with the weekly pass over the whole history in
 * task_passes' row `price-local-days-full:<zones>` (the days the roll-up or older late data
 * dropped): a new list of zones has a row of its own, so its first pass is due at once.
 */
export function localDaysRun(
  db: Database,
  zones: readonly string[],
  log: Logger,
  clock: Clock,
  opts: { batchProducts?: number } = {},
): (signal: AbortSignal) => Promise<void> {
  return cacheRun(db, log, clock, {
    component: 'price-local-days',
    task: `price-local-days-full:${zones.join(',')}`,
    build: (tx, ids, before, since) => buildLocalDays(tx, zones, ids, before, since),
    batch: opts.batchProducts ?? LOCAL_DAY_BATCH_PRODUCTS,
    recentMs: RECENT_MS,
    analyze: { table: 'price_local_days', afterRows: ANALYZE_AFTER_ROWS },
  });
}

/** A month-texts run looks this far back: the month that ended since the last run, and those late data dropped. */
const TEXTS_RECENT_MS = 35 * DAY_MS;

/**
 * The periodic build of the UTC days' month texts (migrations/0025): every product's missing texts
 * of the months that ended, looking back 35 days (a month ended lately, and one late data
 * dropped), with the weekly pass over the whole history in task_passes' row `price-day-texts-full`.
 */
export function monthTextsRun(
  db: Database,
  log: Logger,
  clock: Clock,
  opts: { batchProducts?: number } = {},
): (signal: AbortSignal) => Promise<void> {
  return cacheRun(db, log, clock, {
    component: 'price-day-texts',
    task: 'price-day-texts-full',
    build: buildMonthTexts,
    batch: opts.batchProducts ?? MONTH_TEXT_BATCH_PRODUCTS,
    recentMs: TEXTS_RECENT_MS,
    analyze: { table: 'price_day_texts', afterRows: ANALYZE_AFTER_ROWS },
  });
}
