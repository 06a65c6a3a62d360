import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  BATCH_MAX,
  CsvError,
  IMPORT_ERROR_COLUMNS,
  importErrorRows,
  importProducts as importRows,
  PRODUCT_CSV_COLUMNS,
  ProductCsvReader,
  csvRow,
} from '@pricehound/client';
import { ACCOUNT_HELP, ACCOUNT_OPTIONS, accountClient, cost } from '../account.js';
import { type Command, note, out } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { progress } from '../progress.js';
import { fileHash, readState, rowsOf, type ImportState, statePath, writeState } from './import-state.js';

export const importProducts: Command = {
  name: 'import products',
  summary: 'Import products from a CSV file (resumable)',
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
    const hash = await fileHash(file!);
    const saved = values.restart ? undefined : readState(statePath(file!));
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
      note(`${statePath(file!)} is for another version of the file: starting from the first row`);
    const skipped = state.rows_done;
    if (skipped > 0)
      note(
        `resuming after row ${skipped} (${state.created} created, ${state.failed} failed so far); --restart starts over`,
      );
    // The error report goes on from where the run before stopped.
    if (skipped === 0 || !fs.existsSync(errorsFile)) fs.writeFileSync(errorsFile, csvRow(IMPORT_ERROR_COLUMNS));

    const bar = progress();
    const reader = new ProductCsvReader();
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
        update: Boolean(values.update),
        idempotencyKey: (batch) => `import-${state.run}-${batch[0]!.row}-${batch.length}`,
      });
      for await (const done of batches) {
        let report = '';
        for (const r of done) {
          state[r.result]++;
          if (r.result === 'failed') report += importErrorRows(r);
        }
        if (report) fs.appendFileSync(errorsFile, report);
        state.rows_done = done[done.length - 1]!.row;
        writeState(statePath(file!), state);
        const changed = state.updated > 0 ? `, ${state.updated} updated` : '';
        bar.update(
          bytes / Math.max(1, size),
          `row ${state.rows_done}: ${state.created} created${changed}, ${state.present} present, ${state.failed} failed`,
        );
      }
    } catch (err) {
      if (err instanceof CsvError) throw new CliError(`${file}: ${err.message}`);
      throw err;
    }
    if (!announced && reader.ignored.length > 0) note(`columns ignored: ${reader.ignored.join(', ')}`);
    state.complete = true;
    writeState(statePath(file!), state);

    const result = {
      rows: reader.rows,
      created: state.created,
      updated: state.updated,
      present: state.present,
      failed: state.failed,
      skipped,
      errors_file: state.failed > 0 ? errorsFile : null,
      ignored_columns: reader.ignored,
      requests: account.requests,
    };
    if (state.failed === 0) fs.rmSync(errorsFile, { force: true });
    const text =
      `Imported ${file} into ${url}: ${result.rows} row${result.rows === 1 ? '' : 's'}, ${result.created} created, ` +
      (values.update
        ? `${result.updated} updated, ${result.present} unchanged (same SKU)`
        : `${result.present} already present (same SKU)`) +
      `, ${result.failed} failed` +
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
