import type { ProductInput } from './batches.js';
import { CsvError, CsvReader, type CsvRecord, type CsvValue, csvRow, unguard } from './csv.js';
import type { ErrorDetail } from './errors.js';
import type { components } from './openapi.js';

/**
 * The products CSV that people import and export (`pricehound import products` and
 * `export products`, the dashboard's Import CSV): the columns of a product one can send,
 * by the names the API uses. The service's catalogue export (GET /products.csv) is a
 * report with more columns; it imports too (the extra columns are ignored).
 */
export const PRODUCT_CSV_COLUMNS = [
  'name',
  'base_price',
  'currency',
  'sku',
  'brand',
  'category',
  'description',
  'url',
] as const;
export type ProductCsvColumn = (typeof PRODUCT_CSV_COLUMNS)[number];
export const PRODUCT_CSV_REQUIRED = ['name', 'base_price', 'currency'] as const satisfies readonly ProductCsvColumn[];
/** What `export products` writes: the columns above, then what the service adds (an export is an import file). */
export const PRODUCT_EXPORT_COLUMNS = [...PRODUCT_CSV_COLUMNS, 'id', 'created_at', 'updated_at'] as const;

/** An amount as the API takes it: up to 11 digits, up to 4 decimals. */
const AMOUNT = /^\s*\d{1,11}(\.\d{1,4})?\s*$/;

/** A data row of a products CSV read as a product to send. */
export interface ProductCsvRow {
  /** 1-based, the header not counted. */
  row: number;
  /** The line of the file the row starts on. */
  line: number;
  /** The row's non-empty cells by column (formula guard taken off, `base_price` a number when it is one). */
  product: ProductInput;
  /** What is wrong with the row before asking the service (a price that is not an amount): not sent. */
  problems: ErrorDetail[];
}

const isColumn = (name: string): name is ProductCsvColumn => (PRODUCT_CSV_COLUMNS as readonly string[]).includes(name);

/**
 * Reads a products CSV given in pieces (`push`, then `end`): a header row naming the columns
 * (any order, any case; name, base_price and currency required; others ignored and listed in
 * `ignored`), then a product per row.
 */
export class ProductCsvReader {
  private readonly csv = new CsvReader();
  private header: string[] | undefined;
  /** Header names that are not product columns (an export's id, own_price, ...). */
  ignored: string[] = [];
  /** Data rows read so far. */
  rows = 0;

  push(text: string): ProductCsvRow[] {
    return this.rowsOf(this.csv.push(text));
  }

  /** The last rows; throws CsvError for a file without a header row. */
  end(): ProductCsvRow[] {
    const last = this.rowsOf(this.csv.end());
    if (!this.header)
      throw new CsvError(`the file is empty: expected a header row (${PRODUCT_CSV_COLUMNS.join(', ')})`);
    return last;
  }

  private rowsOf(records: CsvRecord[]): ProductCsvRow[] {
    const out: ProductCsvRow[] = [];
    for (const record of records) {
      if (!this.header) {
        this.header = record.cells.map((c) => c.trim().toLowerCase());
        const missing = PRODUCT_CSV_REQUIRED.filter((c) => !this.header!.includes(c));
        if (missing.length > 0)
          throw new CsvError(`the header row lacks ${missing.join(', ')} (columns: ${PRODUCT_CSV_COLUMNS.join(', ')})`);
        this.ignored = this.header.filter((c) => c !== '' && !isColumn(c));
        continue;
      }
      out.push({ row: ++this.rows, line: record.line, ...productOf(this.header, record.cells) });
    }
    return out;
  }
}

function productOf(header: string[], cells: string[]): { product: ProductInput; problems: ErrorDetail[] } {
  const product: Record<string, unknown> = {};
  const problems: ErrorDetail[] = [];
  header.forEach((column, i) => {
    if (!isColumn(column)) return;
    const value = unguard(cells[i] ?? '');
    if (value.trim() === '') return;
    product[column] = column === 'currency' ? value.trim() : value;
  });
  const price = product.base_price;
  if (typeof price === 'string' && AMOUNT.test(price)) product.base_price = Number(price);
  else
    problems.push({
      field: 'base_price',
      message: price === undefined ? 'is required' : `“${String(price)}” is not an amount like 19.99`,
    });
  return { product: product as ProductInput, problems };
}

/** All the rows of a whole products CSV (the dashboard reads a file at once). */
export function readProductsCsv(text: string): { rows: ProductCsvRow[]; ignored: string[] } {
  const reader = new ProductCsvReader();
  const rows = [...reader.push(text), ...reader.end()];
  return { rows, ignored: reader.ignored };
}

/** A product as a row of PRODUCT_EXPORT_COLUMNS (with its CRLF). */
export function productCsvRow(p: components['schemas']['Product']): string {
  return csvRow(PRODUCT_EXPORT_COLUMNS.map((c): CsvValue => p[c]));
}

/** The header of the error report of an import, and a row of it. */
export const IMPORT_ERROR_COLUMNS = ['row', 'line', 'sku', 'name', 'field', 'message'] as const;
export function importErrorRows(e: {
  row: number;
  line: number;
  sku: string | null;
  name: string;
  problems: ErrorDetail[];
}): string {
  return e.problems.map((d) => csvRow([e.row, e.line, e.sku, e.name, d.field, d.message])).join('');
}
