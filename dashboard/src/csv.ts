/**
 * RFC 4180 CSV reading for the product import: comma separated, fields in double quotes may hold
 * commas, quotes (doubled) and line breaks; CRLF or LF line ends; a UTF-8 byte order mark is
 * skipped. Returns the rows with the line each started on (for error messages).
 */
export interface CsvRow {
  line: number;
  cells: string[];
}

export function parseCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  let rowLine = 1;
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let atCellStart = true;
  const endRow = () => {
    cells.push(cell);
    // A blank line is no row.
    if (!(cells.length === 1 && cells[0] === '')) rows.push({ line: rowLine, cells });
    cells = [];
    cell = '';
    atCellStart = true;
  };
  for (; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        cell += ch;
      }
      continue;
    }
    if (ch === '"' && atCellStart) {
      quoted = true;
      atCellStart = false;
    } else if (ch === ',') {
      cells.push(cell);
      cell = '';
      atCellStart = true;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      // CRLF: the \n ends the row
    } else if (ch === '\n') {
      endRow();
      line++;
      rowLine = line;
    } else {
      cell += ch;
      atCellStart = false;
    }
  }
  if (quoted) throw new Error(`a quoted field that starts on line ${rowLine} is never closed`);
  if (cell !== '' || cells.length > 0) endRow();
  return rows;
}

/** Writes one CSV row (for the per-row error report download). */
export function csvRow(cells: readonly (string | number | null | undefined)[]): string {
  return cells
    .map((c) => {
      const s = c === null || c === undefined ? '' : String(c);
      return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(',');
}
