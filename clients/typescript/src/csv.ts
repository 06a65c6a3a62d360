/**
 * CSV as RFC 4180 describes it, for the files people import and export (the products CSV of the
 * CLI and the dashboard): one reader and one writer, the same in Node and in browsers.
 *
 * Writing: comma-separated cells, CRLF after every row, a cell quoted when it holds a comma, a
 * quote, CR or LF. Text that a spreadsheet would run as a formula (starting with `=`, `+`, `-`,
 * `@`, a tab or a CR) gets a leading `'` (OWASP "CSV Injection"), as the service's own exports
 * do; numbers and booleans are written as they are. Reading takes that guard off again
 * (`unguard`), so an export read back gives `-20% Kettle`, not `'-20% Kettle`.
 */

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_GUARD = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;
const GUARDED = /^'(?=[=+\-@\t\r])/;

/** One cell: null and undefined are empty; text guarded and quoted as needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = NEEDS_GUARD.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One row, with its CRLF. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** A cell as written before the formula guard was added: `'=1+1` is `=1+1`; `'tis` stays. */
export const unguard = (cell: string): string => cell.replace(GUARDED, '');

/** A file that is not the CSV it should be (an unclosed quote, a header without a column needed). */
export class CsvError extends Error {
  override name = 'CsvError';
}

/** A record and the line of the file it starts on (1 for the first). */
export interface CsvRecord {
  cells: string[];
  line: number;
}

/**
 * Reads CSV text given in pieces of any size (a file read in chunks, or all of it at once):
 * `push` returns the records completed so far, `end` the last one. Fields in double quotes may
 * hold commas, doubled quotes and line breaks; CRLF or LF end a record; a UTF-8 byte order mark
 * is skipped; blank lines are no records. Cells are returned as written (see `unguard`).
 */
export class CsvReader {
  private cells: string[] = [];
  private cell = '';
  private quoted = false;
  private atCellStart = true;
  private line = 1;
  private recordLine = 1;
  private started = false;
  /** A CR at the end of a piece: whether it ends a record depends on the next piece. */
  private pendingCr = false;

  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    // An empty piece says nothing (a CR or quote at the end of the last one stays undecided).
    if (text.length === 0) return out;
    let i = 0;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text[i] !== '\n') this.add('\r');
    }
    for (; i < text.length; i++) {
      const ch = text[i]!;
      if (this.quoted) {
        if (ch === '"') {
          if (i + 1 === text.length) {
            // The next piece says whether this is "" or the closing quote.
            this.quoted = false;
            this.closedAtEnd = true;
            continue;
          }
          if (text[i + 1] === '"') {
            this.cell += '"';
            i++;
          } else this.quoted = false;
        } else {
          if (ch === '\n') this.line++;
          this.cell += ch;
        }
        continue;
      }
      if (this.closedAtEnd) {
        this.closedAtEnd = false;
        if (ch === '"') {
          // It was a doubled quote split over two pieces.
          this.cell += '"';
          this.quoted = true;
          continue;
        }
      }
      if (ch === '"' && this.atCellStart) {
        this.quoted = true;
        this.atCellStart = false;
      } else if (ch === ',') {
        this.cells.push(this.cell);
        this.cell = '';
        this.atCellStart = true;
      } else if (ch === '\r') {
        if (i + 1 === text.length) this.pendingCr = true;
        else if (text[i + 1] !== '\n') this.add(ch);
      } else if (ch === '\n') {
        this.endRecord(out);
        this.line++;
        this.recordLine = this.line;
      } else this.add(ch);
    }
    return out;
  }

  /** The last record; throws CsvError when a quoted field was never closed. */
  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    if (this.pendingCr) {
      this.pendingCr = false;
      this.add('\r');
    }
    this.closedAtEnd = false;
    if (this.quoted) throw new CsvError(`a quoted field that starts on line ${this.recordLine} is never closed`);
    if (this.cell !== '' || this.cells.length > 0) this.endRecord(out);
    return out;
  }

  private closedAtEnd = false;

  private add(ch: string) {
    this.cell += ch;
    this.atCellStart = false;
  }

  private endRecord(out: CsvRecord[]) {
    this.cells.push(this.cell);
    // A blank line is no record.
    if (!(this.cells.length === 1 && this.cells[0] === '')) out.push({ cells: this.cells, line: this.recordLine });
    this.cells = [];
    this.cell = '';
    this.atCellStart = true;
  }
}

/** All the records of a whole text. */
export function parseCsv(text: string): CsvRecord[] {
  const reader = new CsvReader();
  return [...reader.push(text), ...reader.end()];
}
