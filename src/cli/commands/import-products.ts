import {
  BATCH_MAX,
  IMPORT_ERROR_COLUMNS,
  type ImportedRow,
  importErrorRows,
  importProducts as importRows,
  PRODUCT_CSV_COLUMNS,
  ProductCsvReader,
  type ProductCsvRow,
} from '@pricehound/client';
import { ACCOUNT_HELP, ACCOUNT_OPTIONS, accountClient } from '../account.js';
import type { Command } from '../command.js';
import { runCsvImport } from './csv-import.js';

export const importProducts: Command = {
  name: 'import products',
  positionals: [1, 1],
  argName: 'FILE (the CSV file to import)',
  options: {
    ...ACCOUNT_OPTIONS,
    errors: { type: 'string' },
    'batch-size': { type: 'string' },
    update: { type: 'boolean' },
    restart: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  help: `Usage: pricehound import products FILE.csv [--update] [--url URL] [--key KEY] [--errors FILE] [--batch-size N] [--restart] [--json]

Creates the products of a CSV file in the account of the API key, on the server at --url, in
batches through POST /products/batch: the same validation and rules as the API and the
dashboard's import (both read the file with @pricehound/client).

The file: UTF-8, a header row, then one product per row. Columns (any order, names as the API
has them): ${PRODUCT_CSV_COLUMNS.join(', ')}; name, base_price and currency are required.
Other columns (an export's id, own_price, ...) are ignored and listed. The leading ' that
exports put before text a spreadsheet would run (-20% Kettle is written '-20% Kettle) is
taken off, so an export imports back as it was.

A row whose SKU is already in the account is counted as present and left as it is; with
--update it is changed to the row's values (one PATCH per product that differs; the catalogue
is read first, one request per 100 products), and counted as updated.

Errors: a row refused (by the API, or a base_price that is not an amount) is reported by row
number (the header is row 0), file line, SKU, name, field and message in FILE.errors.csv (or
--errors), summarised at the end; the other rows are still imported.

Resuming: after each batch the progress is saved in FILE.import-state.json next to the file
(with the file's SHA-256). Running the same command again skips the rows done and goes on
where it stopped; each batch is sent with an Idempotency-Key made from the file and the
batch, so a batch cut off mid-way is not created twice. When the import is complete the state
file says so, and a re-run changes nothing. --restart ignores the saved state.

Options:
${ACCOUNT_HELP}
  --update           change the products whose SKU is already there to the file's values
  --errors FILE      where to write the error report (default: FILE.errors.csv)
  --batch-size N     products per request, 1 to ${BATCH_MAX} (default ${BATCH_MAX})
  --restart          start from the first row, ignoring FILE.import-state.json
  --json             print the summary as one JSON object: rows, created, updated, present,
                     failed, skipped (rows done by an earlier run), errors_file,
                     ignored_columns, requests
  -h, --help         show this help

Cost: a request per batch (plus, with --update, the catalogue's pages and a request per
product changed), each counted against the key's hourly limit; the summary says how many.
Progress goes to stderr: a bar on a terminal, otherwise a line every few seconds.
Exit status: 0 every row is in the account, 1 some rows failed (see the report) or another
failure, 2 wrong usage.
`,
  async run(values, [file]) {
    return runCsvImport<ProductCsvRow, ImportedRow>(
      {
        command: this.name,
        kind: 'products',
        reader: new ProductCsvReader(),
        errorColumns: IMPORT_ERROR_COLUMNS,
        errorRows: importErrorRows,
        send: (ph, rows, options) => importRows(ph, rows, { ...options, update: Boolean(values.update) }),
        keyPrefix: 'import',
        counted: {
          updatedInJson: true,
          updated: Boolean(values.update),
          created: (n) => `${n} created`,
          present: values.update ? 'unchanged (same SKU)' : 'already present (same SKU)',
        },
      },
      values,
      file!,
      accountClient(values, this.name),
    );
  },
};
