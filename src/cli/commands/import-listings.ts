import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  BATCH_MAX,
  CsvError,
  csvRow,
  importListings as importRows,
  LISTING_CSV_COLUMNS,
  LISTING_IMPORT_ERROR_COLUMNS,
  ListingCsvReader,
  listingImportErrorRows,
} from '@pricehound/client';
import { ACCOUNT_HELP, ACCOUNT_OPTIONS, accountClient, cost } from '../account.js';
import { type Command, note, out } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { progress } from '../progress.js';
import { fileHash, readState, rowsOf, type ImportState, statePath, writeState } from './import-state.js';

export const importListings: Command = {
  name: 'import listings',
  summary: "Import competitors' listings from a CSV file (resumable)",
  positionals: [1, 1],
  argName: 'FILE (the CSV file to import)',
  options: {
    ...ACCOUNT_OPTIONS,
    errors: { type: 'string' },
    'batch-size': { type: 'string' },
    restart: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  help: `Usage: pricehound import listings FILE.csv [--url URL] [--key KEY] [--errors FILE] [--batch-size N] [--restart] [--json]

Starts monitoring competitors' pages of the account's products, from a CSV file, in batches
through POST /listings/batch: the same validation and rules as the API and the dashboard's
listing import (both read the file with @pricehound/client).

The file: UTF-8, a header row, then one page per row. Columns (any order): ${LISTING_CSV_COLUMNS.join(', ')}.
  sku         the SKU of the product the page shows (required)
  url         the address of the competitor's page, http or https (required)
  competitor  the competitor: its id (comp_...) or its name as the account has it (any case);
              empty or absent: the account's competitor of the URL's domain, created (named
              after the domain) when there is none. A name no competitor has is refused, not
              created, so a typo never makes a new competitor.
Other columns are ignored and listed.

A row whose product already has a listing at that URL is counted as present and left as it is.

Errors: a row refused (by the API: an unknown SKU, a URL on a private address, ...; or here: an
unknown competitor name) is reported by row number (the header is row 0), file line, SKU, URL,
competitor, field and message in FILE.errors.csv (or --errors), summarised at the end; the other
rows are still imported.

Resuming: after each batch the progress is saved in FILE.listings-import-state.json next to the
file (with the file's SHA-256). Running the same command again goes on where it stopped; each
batch is sent with an Idempotency-Key made from the file and the batch. --restart ignores the
saved state (rows already imported then count as present).

Options:
${ACCOUNT_HELP}
  --errors FILE      where to write the error report (default: FILE.errors.csv)
  --batch-size N     listings per request, 1 to ${BATCH_MAX} (default ${BATCH_MAX})
  --restart          start from the first row, ignoring FILE.listings-import-state.json
  --json             print the summary as one JSON object: rows, created, present, failed,
                     skipped (rows done by an earlier run), errors_file, ignored_columns, requests
  -h, --help         show this help

Cost: a request per batch (plus, when a row names a competitor by name, the competitors' pages,
a request per 100 competitors), each counted against the key's hourly limit; the summary says
how many. Progress goes to stderr: a bar on a terminal, otherwise a line every few seconds.
Exit status: 0 every row is in the account, 1 some rows failed (see the report) or another
failure, 2 wrong usage.
`,
  async run(values, [file]) {
    const account = accountClient(values, this.name);
    const { ph, url } = account;
    const batchSize = values['batch-size'] === undefined ? BATCH_MAX : Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BATCH_MAX) {
      throw new UsageError(`--batch-size must be a whole number from 1 to ${BATCH_MAX}`, this.name);
    }
    let size: number;
    try {
      const st = fs.statSync(file!);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
    } catch {
      throw new CliError(`cannot read ${file}: no such file`);
    }
    const errorsFile = typeof values.errors === 'string' ? values.errors : `${file}.errors.csv`;
    const stateFile = statePath(file!, 'listings');
    const hash = await fileHash(file!);
    const saved = values.restart ? undefined : readState(stateFile);
    const fresh: ImportState = {
      sha256: hash,
      run: crypto.randomUUID(),
      rows_done: 0,
      created: 0,
      updated: 0,
      present: 0,
      failed: 0,
      complete: false,
    };
    const state: ImportState = saved?.sha256 === hash ? { ...fresh, ...saved } : fresh;
    if (saved && saved.sha256 !== hash)
      note(`${stateFile} is for another version of the file: starting from the first row`);
    const skipped = state.rows_done;
    if (skipped > 0)
      note(
        `resuming after row ${skipped} (${state.created} created, ${state.failed} failed so far); --restart starts over`,
      );
    // The error report goes on from where the run before stopped.
    if (skipped === 0 || !fs.existsSync(errorsFile)) fs.writeFileSync(errorsFile, csvRow(LISTING_IMPORT_ERROR_COLUMNS));

    const bar = progress();
    const reader = new ListingCsvReader();
    let bytes = 0;
    let announced = false;
    const rows = rowsOf(file!, reader, skipped, (b) => {
      bytes = b;
      if (!announced && reader.ignored.length > 0) {
        announced = true;
        note(`columns ignored: ${reader.ignored.join(', ')}`);
      }
    });
    try {
      const batches = importRows(ph, rows, {
        batchSize,
        idempotencyKey: (batch) => `import-listings-${state.run}-${batch[0]!.row}-${batch.length}`,
      });
      for await (const done of batches) {
        let report = '';
        for (const r of done) {
          state[r.result]++;
          if (r.result === 'failed') report += listingImportErrorRows(r);
        }
        if (report) fs.appendFileSync(errorsFile, report);
        state.rows_done = done[done.length - 1]!.row;
        writeState(stateFile, state);
        bar.update(
          bytes / Math.max(1, size),
          `row ${state.rows_done}: ${state.created} created, ${state.present} present, ${state.failed} failed`,
        );
      }
    } catch (err) {
      if (err instanceof CsvError) throw new CliError(`${file}: ${err.message}`);
      throw err;
    }
    if (!announced && reader.ignored.length > 0) note(`columns ignored: ${reader.ignored.join(', ')}`);
    state.complete = true;
    writeState(stateFile, state);

    const result = {
      rows: reader.rows,
      created: state.created,
      present: state.present,
      failed: state.failed,
      skipped,
      errors_file: state.failed > 0 ? errorsFile : null,
      ignored_columns: reader.ignored,
      requests: account.requests,
    };
    if (state.failed === 0) fs.rmSync(errorsFile, { force: true });
    const text =
      `Imported ${file} into ${url}: ${result.rows} row${result.rows === 1 ? '' : 's'}, ${result.created} listing${result.created === 1 ? '' : 's'} created, ` +
      `${result.present} already present (same product and URL), ${result.failed} failed` +
      (skipped > 0 ? ` (rows 1-${skipped} were done by an earlier run)` : '') +
      (state.failed > 0 ? `; the errors are in ${errorsFile}` : '') +
      `. Cost: ${cost(account.requests, ph.usage)}.`;
    if (values.json) {
      bar.done('');
      out(JSON.stringify(result));
    } else bar.done(text);
    return state.failed > 0 ? EXIT.failure : EXIT.ok;
  },
};
