import {
  BATCH_MAX,
  importListings as importRows,
  LISTING_CSV_COLUMNS,
  LISTING_IMPORT_ERROR_COLUMNS,
  ListingCsvReader,
  listingImportErrorRows,
} from '@pricehound/client';
import { ACCOUNT_HELP, ACCOUNT_OPTIONS, accountClient } from '../account.js';
import type { Command } from '../command.js';
import { runCsvImport } from './csv-import.js';

export const importListings: Command = {
  name: 'import listings',
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
    return runCsvImport(
      {
        command: this.name,
        kind: 'listings',
        reader: new ListingCsvReader(),
        errorColumns: LISTING_IMPORT_ERROR_COLUMNS,
        errorRows: listingImportErrorRows,
        send: importRows,
        keyPrefix: 'import-listings',
        counted: {
          updatedInJson: false,
          updated: false,
          created: (n) => `${n} listing${n === 1 ? '' : 's'} created`,
          present: 'already present (same product and URL)',
        },
      },
      values,
      file!,
      accountClient(values, this.name),
    );
  },
};
