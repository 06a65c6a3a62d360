import { loadConfigOrExit } from '../../config.js';
import type { RollupResult, SeriesKey } from '../../prices/rollup/index.js';
import { type Command, note, out } from '../command.js';
import { EXIT, UsageError } from '../errors.js';

/** The database side (most of the application), loaded when the command runs, not for --help. */
const target = () => import('../target.js');

export const pricesRollup: Command = {
  name: 'prices rollup',
  positionals: [0, 0],
  options: { 'older-than': { type: 'string' }, json: { type: 'boolean' } },
  help: `Usage: pricehound prices rollup --older-than DAYS [--json]

Rolls up price observations older than DAYS days (counted back from now to a whole UTC hour):
per series (a product at a competitor, or our own shop), currency and UTC hour, only the
first, last, lowest and highest observations stay, and they carry the count and the sum of
the prices of the ones removed. Hour, day, week and month history (open, close, min, max,
average, count) stays the same in every time zone whose offset is a whole number of hours;
raw observations of those hours are gone. Runs in short batches, also while the server runs.
Running it again changes nothing. See docs/prices/HISTORY.md.

Options:
  --older-than DAYS  whole number of days, at least 1; required
  --json             print one JSON object: cutoff, series, deleted, updated
  -h, --help         show this help

Exit status: 0 done, 1 failure, 2 wrong usage or configuration.
`,
  async run(values) {
    const raw = values['older-than'];
    if (raw === undefined) throw new UsageError('--older-than is required (a number of days)', this.name);
    if (typeof raw !== 'string' || !/^\d{1,5}$/.test(raw) || Number(raw) < 1) {
      throw new UsageError(
        `--older-than must be a whole number of days from 1 to 99999, got "${String(raw)}"`,
        this.name,
      );
    }
    const ops = await (await target()).openOperations(loadConfigOrExit());
    const total: Omit<RollupResult, 'next'> = { cutoff: '', series: 0, deleted: 0, updated: 0 };
    try {
      if (ops.via.kind === 'direct') await ops.migrate();
      let after: SeriesKey | null = null;
      do {
        const r: RollupResult = await ops.rollupPrices({ olderThanDays: Number(raw), after });
        total.cutoff = r.cutoff;
        total.series += r.series;
        total.deleted += r.deleted;
        total.updated += r.updated;
        after = r.next;
        if (after && !values.json) note(`... ${total.series} series so far, ${total.deleted} observations removed`);
      } while (after);
    } finally {
      await ops.close();
    }
    if (values.json) out(JSON.stringify(total));
    else
      out(
        `Rolled up observations before ${total.cutoff}: ${total.series} series read, ${total.deleted} observations removed, ${total.updated} kept ones now carry their hour's counts.`,
      );
    return EXIT.ok;
  },
};
