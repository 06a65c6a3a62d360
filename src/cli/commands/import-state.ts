import crypto from 'node:crypto';
import fs from 'node:fs';

/**
 * What `pricehound import products FILE` (or `import listings FILE`) has done, saved next to FILE after every batch so a
 * re-run goes on where it stopped. `sha256` ties it to one version of the file.
 */
export interface ImportState {
  sha256: string;
  /** Names this run's batches (their Idempotency-Keys): a --restart is a new run. */
  run: string;
  /** Data rows (the header not counted) sent and answered. */
  rows_done: number;
  created: number;
  /** With --update: products whose SKU was there, changed to the file's values (always 0 for listings). */
  updated: number;
  present: number;
  failed: number;
  complete: boolean;
}

/** Beside the file; a listings import keeps its own, so the same file imported both ways never resumes the other's run. */
export const statePath = (file: string, kind: 'products' | 'listings' = 'products') =>
  kind === 'products' ? `${file}.import-state.json` : `${file}.listings-import-state.json`;

export async function fileHash(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The rows of `file` after row `skip`, read a piece at a time by a CSV reader; `read` tells how far into the file. */
export async function* rowsOf<R extends { row: number }>(
  file: string,
  reader: { push(text: string): R[]; end(): R[] },
  skip: number,
  read: (bytes: number) => void,
): AsyncGenerator<R> {
  let bytes = 0;
  const stream = fs.createReadStream(file);
  const text = new TextDecoder('utf-8');
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    read(bytes);
    for (const row of reader.push(text.decode(chunk, { stream: true }))) if (row.row > skip) yield row;
  }
  for (const row of [...reader.push(text.decode()), ...reader.end()]) if (row.row > skip) yield row;
}

export function readState(path: string): ImportState | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(path, 'utf8')) as ImportState;
    return typeof s.sha256 === 'string' && typeof s.run === 'string' && Number.isInteger(s.rows_done)
      ? { ...s, updated: s.updated ?? 0 }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Written to a temporary file and renamed: a crash leaves the old state or the new, never half of one. */
export function writeState(path: string, state: ImportState): void {
  fs.writeFileSync(`${path}.tmp`, JSON.stringify(state));
  fs.renameSync(`${path}.tmp`, path);
}
