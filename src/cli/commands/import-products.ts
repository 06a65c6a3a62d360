import crypto from 'node:crypto';
import fs from 'node:fs';
import { parse } from 'csv-parse';
import { accountApi, apiKeyOf, withOperations } from '../account-api.js';
import { type Command, note, out } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { progress } from '../progress.js';
import { readState, type ImportState, statePath, writeState } from './import-state.js';

/** The columns of the dashboard's import (dashboard/src/pages/products.ts); the rest are ignored. */
export const IMPORT_COLUMNS = ['name', 'base_price', 'currency', 'sku', 'brand', 'category', 'description', 'url'] as const;
const REQUIRED = ['name', 'base_price', 'currency'] as const;
/** POST /products/batch takes at most this many items. */
const MAX_BATCH = 1000;
const NUMBER = /^\s*\d+(\.\d+)?\s*$/;
/** The guard GET /products.csv puts before text a spreadsheet would run (src/http/csv.ts): taken off again. */
const CSV_GUARD = /^'(?=[=+\-@\t\r])/;

interface Row {
  /** 1-based data row (the header is row 0). */
  row: number;
  /** The file line the row starts on. */
  line: number;
  product: Record<string, unknown>;
}

interface BatchAnswer {
  data: { index: number; status: number; error?: { error: string; details?: { field: string; message: string }[] } }[];
}

const ERROR_HEADER = 'row,line,sku,name,field,message\n';
const csvCell = (v: string | number) => {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

function productOf(header: string[], record: string[]): Record<string, unknown> {
  const product: Record<string, unknown> = {};
  header.forEach((column, i) => {
    if (!(IMPORT_COLUMNS as readonly string[]).includes(column)) return;
    const value = (record[i] ?? '').replace(CSV_GUARD, '');
    if (value.trim() === '') return;
    // Numbers as numbers; anything else goes as sent, and the API names what is wrong with it.
    product[column] = column === 'base_price' && NUMBER.test(value) ? Number(value) : column === 'currency' ? value.trim() : value;
  });
  return product;
}

async function fileHash(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export const importProducts: Command = {
  name: 'import products',
  summary: 'Import products from a CSV file (resumable)',
  positionals: [1, 1],
  argName: 'FILE (the CSV file to import)',
  options: {
    key: { type: 'string' },
    errors: { type: 'string' },
    'batch-size': { type: 'string' },
    restart: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  help: `Usage: pricehound import products FILE.csv [--errors FILE] [--batch-size N] [--restart] [--json]

Creates the products of a CSV file in the account of the API key (PRICEHOUND_KEY, or --key),
in batches through POST /products/batch: the same validation and rules as the API and the
dashboard's import. Works whether or not the server is running.

The file: UTF-8, a header row, then one product per row. Columns (any order, names as in
GET /products.csv): ${IMPORT_COLUMNS.join(', ')}; name, base_price and currency are
required. Other columns (the export's id, own_price, ...) are ignored and listed.

Errors: a row the API refuses is reported by row number (the header is row 0), file line,
field and message in FILE.errors.csv (or --errors), summarised at the end; the other rows
are still imported.

Resuming: after each batch the progress is saved in FILE.import-state.json next to the file
(with the file's SHA-256). Running the same command again skips the rows done and goes on
where it stopped; each batch is sent with an Idempotency-Key made from the file and the
batch, so a batch cut off mid-way is not created twice. A row whose SKU is already in the
account is counted as present, not as an error. When the import is complete the state file
says so, and a re-run changes nothing. --restart ignores the saved state.

Options:
  --key KEY          the API key (default: $PRICEHOUND_KEY)
  --errors FILE      where to write the error report (default: FILE.errors.csv)
  --batch-size N     products per request, 1 to ${MAX_BATCH} (default ${MAX_BATCH})
  --restart          start from the first row, ignoring FILE.import-state.json
  --json             print the summary as one JSON object: rows, created, present, failed,
                     skipped (rows done by an earlier run), errors_file, ignored_columns
  -h, --help         show this help

Progress goes to stderr: a bar on a terminal, otherwise a line every few seconds.
Exit status: 0 every row is in the account, 1 some rows failed (see the report) or another
failure, 2 wrong usage or configuration.
`,
  async run(values, [file]) {
    const key = apiKeyOf(values, this.name);
    const batchSize = values['batch-size'] === undefined ? MAX_BATCH : Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
      throw new UsageError(`--batch-size must be a whole number from 1 to ${MAX_BATCH}`, this.name);
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
    const state: ImportState =
      saved?.sha256 === hash ? saved : { sha256: hash, run: crypto.randomUUID(), rows_done: 0, created: 0, present: 0, failed: 0, complete: false };
    if (saved && saved.sha256 !== hash) note(`${statePath(file!)} is for another version of the file: starting from the first row`);
    const skipped = state.rows_done;
    if (skipped > 0) note(`resuming after row ${skipped} (${state.created} created, ${state.failed} failed so far); --restart starts over`);
    // The error report goes on from where the run before stopped.
    if (skipped === 0 || !fs.existsSync(errorsFile)) fs.writeFileSync(errorsFile, ERROR_HEADER);

    const bar = progress();
    let ignored: string[] = [];
    const summary = await withOperations(async (ops) => {
      const api = accountApi(ops, key);
      const parser = fs.createReadStream(file!).pipe(
        parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }),
      );
      let header: string[] | undefined;
      let batch: Row[] = [];
      let rowNumber = 0;
      let bytes = 0;

      const send = async () => {
        if (batch.length === 0) return;
        const first = batch[0]!.row;
        const answer = await api.json<BatchAnswer>('POST', '/products/batch', { products: batch.map((r) => r.product) }, {
          'idempotency-key': `import-${state.run}-${first}-${batch.length}`,
        });
        const lines: string[] = [];
        for (const item of answer.data) {
          const r = batch[item.index]!;
          if (item.status === 201) state.created++;
          else if (item.status === 409 && item.error?.details?.some((d) => d.field === 'sku' && d.message.startsWith('is already used'))) state.present++;
          else {
            state.failed++;
            const details = item.error?.details?.length ? item.error.details : [{ field: '', message: item.error?.error ?? `status ${item.status}` }];
            for (const d of details) {
              lines.push([r.row, r.line, String(r.product.sku ?? ''), String(r.product.name ?? ''), d.field, d.message].map(csvCell).join(',') + '\n');
            }
          }
        }
        if (lines.length > 0) fs.appendFileSync(errorsFile, lines.join(''));
        state.rows_done = batch[batch.length - 1]!.row;
        writeState(statePath(file!), state);
        batch = [];
        bar.update(bytes / Math.max(1, size), `row ${state.rows_done}: ${state.created} created, ${state.present} present, ${state.failed} failed`);
      };

      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number; bytes: number } }>) {
        if (!header) {
          header = record.map((c) => c.trim().toLowerCase());
          const missing = REQUIRED.filter((c) => !header!.includes(c));
          if (missing.length > 0) throw new CliError(`${file}: the header row lacks ${missing.join(', ')} (columns: ${IMPORT_COLUMNS.join(', ')})`);
          ignored = header.filter((c) => c !== '' && !(IMPORT_COLUMNS as readonly string[]).includes(c));
          if (ignored.length > 0) note(`columns ignored: ${ignored.join(', ')}`);
          continue;
        }
        rowNumber++;
        bytes = info.bytes;
        if (rowNumber <= skipped) continue;
        batch.push({ row: rowNumber, line: info.lines, product: productOf(header, record) });
        if (batch.length >= batchSize) await send();
      }
      if (!header) throw new CliError(`${file} is empty: expected a header row (${IMPORT_COLUMNS.join(', ')})`);
      await send();
      state.complete = true;
      writeState(statePath(file!), state);
      return { rows: rowNumber };
    });

    const result = {
      rows: summary.rows,
      created: state.created,
      present: state.present,
      failed: state.failed,
      skipped,
      errors_file: state.failed > 0 ? errorsFile : null,
      ignored_columns: ignored,
    };
    if (state.failed === 0) fs.rmSync(errorsFile, { force: true });
    const text =
      `Imported ${file}: ${result.rows} rows, ${result.created} created, ${result.present} already present (same SKU), ${result.failed} failed` +
      (skipped > 0 ? ` (rows 1-${skipped} were done by an earlier run)` : '') +
      (state.failed > 0 ? `; the errors are in ${errorsFile}` : '');
    if (values.json) {
      bar.done('');
      out(JSON.stringify(result));
    } else bar.done(text);
    return state.failed > 0 ? EXIT.failure : EXIT.ok;
  },
};
