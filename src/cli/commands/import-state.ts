import fs from 'node:fs';

/**
 * What `pricehound import products FILE` has done, saved next to FILE after every batch so a
 * re-run goes on where it stopped. `sha256` ties it to one version of the file.
 */
export interface ImportState {
  sha256: string;
  /** Names this run's batches (their Idempotency-Keys): a --restart is a new run. */
  run: string;
  /** Data rows (the header not counted) sent and answered. */
  rows_done: number;
  created: number;
  /** With --update: products whose SKU was there, changed to the file's values. */
  updated: number;
  present: number;
  failed: number;
  complete: boolean;
}

export const statePath = (file: string) => `${file}.import-state.json`;

export function readState(path: string): ImportState | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(path, 'utf8')) as ImportState;
    return typeof s.sha256 === 'string' && typeof s.run === 'string' && Number.isInteger(s.rows_done) ? { ...s, updated: s.updated ?? 0 } : undefined;
  } catch {
    return undefined;
  }
}

/** Written to a temporary file and renamed: a crash leaves the old state or the new, never half of one. */
export function writeState(path: string, state: ImportState): void {
  fs.writeFileSync(`${path}.tmp`, JSON.stringify(state));
  fs.renameSync(`${path}.tmp`, path);
}
