import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * CSV as RFC 4180 describes it: comma-separated cells, CRLF after every row (the last
 * included), a cell quoted when it holds a comma, a double quote, CR or LF, and a quote inside a
 * quoted cell doubled. UTF-8, no byte order mark.
 *
 * Strings are treated as text that may come from users (names, notes, ids): one that starts
 * with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'`, so a spreadsheet shows it instead
 * of running it as a formula (OWASP, "CSV Injection"). Numbers and booleans are written as
 * they are: they are ours, and a negative number must stay a number. Write a number as a
 * number, never as a string, or it gets the guard too.
 */
export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_GUARD = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: null and undefined are empty; strings guarded and quoted as needed. */
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

/** Header and rows as one string: for answers whose size is already bounded. */
export function csvText(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  let out = csvRow(header);
  for (const r of rows) out += csvRow(r);
  return out;
}

/**
 * Header and rows as a stream, for answers too large to hold: `pages` yields the rows a page at
 * a time (each page one query), and nothing is read ahead of what the client takes.
 */
export function csvStream(header: readonly string[], pages: AsyncIterable<readonly (readonly CsvValue[])[]>): Readable {
  async function* lines() {
    yield csvRow(header);
    for await (const page of pages) {
      let chunk = '';
      for (const r of page) chunk += csvRow(r);
      if (chunk) yield chunk;
    }
  }
  return Readable.from(lines(), { objectMode: false });
}

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/**
 * `Content-Disposition: attachment` with the file name: the plain form for every client, plus
 * the RFC 6266 `filename*` form when the name is not plain ASCII.
 */
export function attachment(filename: string): string {
  const plain = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return plain === filename
    ? `attachment; filename="${plain}"`
    : `attachment; filename="${plain}"; filename*=UTF-8''${encoded}`;
}

/** Sets the CSV content type and the attachment header; the caller sends the body. */
export function csvHeaders(reply: FastifyReply, filename: string): FastifyReply {
  return reply.type(CSV_CONTENT_TYPE).header('Content-Disposition', attachment(filename));
}

/** The response headers a CSV route documents (src/http/schemas.ts `withHeaders` extra). */
export const contentDispositionHeader = {
  'Content-Disposition': {
    type: 'string',
    maxLength: 300,
    pattern: '^attachment; filename="',
    description: 'Always `attachment`, with a file name to save the CSV as',
  },
};
