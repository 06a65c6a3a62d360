import crypto from 'node:crypto';
import fs from 'node:fs';
import { BATCH_MAX, CsvError, csvRow, type PricehoundClient } from '@pricehound/client';
import { type AccountClient, cost } from '../account.js';
import { note, type OptionValues, out } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { progress } from '../progress.js';
import { fileHash, readState, rowsOf, type ImportState, statePath, writeState } from './import-state.js';

/** What one kind of CSV import (products, listings) brings to the one resumable runner below. */
export interface CsvImportKind<Row extends { row: number }, Done extends { row: number; result: Outcome }> {
  command: string;
  /** Names the state file beside the CSV file (import-state.ts). */
  kind: 'products' | 'listings';
  reader: { push(text: string): Row[]; end(): Row[]; readonly ignored: string[]; readonly rows: number };
  errorColumns: readonly string[];
  errorRows(done: NoInfer<Done>): string;
  /** The client's batching generator for this kind, sending Idempotency-Keys made by `idempotencyKey`. */
  send(
    ph: PricehoundClient,
    rows: AsyncIterable<Row>,
    options: { batchSize: number; idempotencyKey: (batch: Row[]) => string },
  ): AsyncIterable<Done[]>;
  /** Prefix of every batch's Idempotency-Key. */
  keyPrefix: string;
  /**
   * How the summary names the counts. `updated`: the text counts rows changed to the file's values
   * (products with --update); `updatedInJson`: --json always has the field (products).
   */
  counted: { updated: boolean; updatedInJson: boolean; present: string; created: (n: number) => string };
}

type Outcome = 'created' | 'updated' | 'present' | 'failed';

/**
 * Runs `pricehound import <kind> FILE`: reads the file a piece at a time, sends it in batches,
 * appends refused rows to the errors file and saves the progress after every batch so a re-run
 * goes on where it stopped (docs/CLI.md).
 */
export async function runCsvImport<Row extends { row: number }, Done extends { row: number; result: Outcome }>(
  def: CsvImportKind<Row, Done>,
  values: OptionValues,
  file: string,
  account: AccountClient,
): Promise<number> {
  const { ph, url } = account;
  const batchSize = values['batch-size'] === undefined ? BATCH_MAX : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BATCH_MAX) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${BATCH_MAX}`, def.command);
  }
  let size: number;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new Error('not a file');
    size = st.size;
  } catch {
    throw new CliError(`cannot read ${file}: no such file`);
  }
  const errorsFile = typeof values.errors === 'string' ? values.errors : `${file}.errors.csv`;
  const stateFile = statePath(file, def.kind);
  const hash = await fileHash(file);
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
  if (skipped === 0 || !fs.existsSync(errorsFile)) fs.writeFileSync(errorsFile, csvRow(def.errorColumns));

  const bar = progress();
  const { reader } = def;
  let bytes = 0;
  let announced = false;
  const rows = rowsOf(file, reader, skipped, (b) => {
    bytes = b;
    if (!announced && reader.ignored.length > 0) {
      announced = true;
      note(`columns ignored: ${reader.ignored.join(', ')}`);
    }
  });
  try {
    const batches = def.send(ph, rows, {
      batchSize,
      idempotencyKey: (batch) => `${def.keyPrefix}-${state.run}-${batch[0]!.row}-${batch.length}`,
    });
    for await (const done of batches) {
      let report = '';
      for (const r of done) {
        state[r.result]++;
        if (r.result === 'failed') report += def.errorRows(r);
      }
      if (report) fs.appendFileSync(errorsFile, report);
      state.rows_done = done[done.length - 1]!.row;
      writeState(stateFile, state);
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
  writeState(stateFile, state);

  const result = {
    rows: reader.rows,
    created: state.created,
    ...(def.counted.updatedInJson ? { updated: state.updated } : {}),
    present: state.present,
    failed: state.failed,
    skipped,
    errors_file: state.failed > 0 ? errorsFile : null,
    ignored_columns: reader.ignored,
    requests: account.requests,
  };
  if (state.failed === 0) fs.rmSync(errorsFile, { force: true });
  const text =
    `Imported ${file} into ${url}: ${result.rows} row${result.rows === 1 ? '' : 's'}, ${def.counted.created(result.created)}, ` +
    (def.counted.updated ? `${state.updated} updated, ` : '') +
    `${result.present} ${def.counted.present}, ${result.failed} failed` +
    (skipped > 0 ? ` (rows 1-${skipped} were done by an earlier run)` : '') +
    (state.failed > 0 ? `; the errors are in ${errorsFile}` : '') +
    `. Cost: ${cost(account.requests, ph.usage)}.`;
  if (values.json) {
    bar.done('');
    out(JSON.stringify(result));
  } else bar.done(text);
  return state.failed > 0 ? EXIT.failure : EXIT.ok;
}
