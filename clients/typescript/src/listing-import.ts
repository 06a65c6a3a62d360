import { type ListingInput, streamBatches } from './batches.js';
import type { PricehoundClient } from './client.js';
import { CsvError, type CsvRecord, CsvReader, csvRow, unguard } from './csv.js';
import type { ErrorDetail } from './errors.js';
import { BATCH_MAX } from './limits.js';

/**
 * The listings CSV people import (`pricehound import listings`, the dashboard's listing import):
 * a header row, then one competitor's page per row. `sku` names the product (its SKU in the
 * account), `url` the page, and the optional `competitor` the competitor: its id (`comp_...`) or
 * its name as the account has it (compared without regard to case or surrounding spaces); left
 * empty, the service takes the account's competitor of the URL's domain, creating it (named
 * after the domain) when there is none. A name that no competitor has is refused, not created:
 * a typo must not become a new competitor.
 */
export const LISTING_CSV_COLUMNS = ['sku', 'url', 'competitor'] as const;
export const LISTING_CSV_REQUIRED = ['sku', 'url'] as const;

export interface ListingCsvRow {
  /** 1 for the first data row (the header is row 0). */
  row: number;
  /** The file line the row starts on. */
  line: number;
  sku: string;
  url: string;
  /** The competitor column as written (trimmed); '' when empty or absent. */
  competitor: string;
  /** What the reader found wrong (then the row is not sent). */
  problems: ErrorDetail[];
}

/** Reads a listings CSV a piece at a time (`push`, then `end`), as ProductCsvReader reads products. */
export class ListingCsvReader {
  private readonly csv = new CsvReader();
  private header: string[] | undefined;
  /** Header names that are not listing columns. */
  ignored: string[] = [];
  /** Data rows read so far. */
  rows = 0;

  push(text: string): ListingCsvRow[] {
    return this.rowsOf(this.csv.push(text));
  }

  /** The last rows; throws CsvError for a file without a header row. */
  end(): ListingCsvRow[] {
    const last = this.rowsOf(this.csv.end());
    if (!this.header)
      throw new CsvError(`the file is empty: expected a header row (${LISTING_CSV_COLUMNS.join(', ')})`);
    return last;
  }

  private rowsOf(records: CsvRecord[]): ListingCsvRow[] {
    const out: ListingCsvRow[] = [];
    for (const record of records) {
      if (!this.header) {
        this.header = record.cells.map((c) => c.trim().toLowerCase());
        const missing = LISTING_CSV_REQUIRED.filter((c) => !this.header!.includes(c));
        if (missing.length > 0)
          throw new CsvError(`the header row lacks ${missing.join(', ')} (columns: ${LISTING_CSV_COLUMNS.join(', ')})`);
        this.ignored = this.header.filter((h) => h !== '' && !(LISTING_CSV_COLUMNS as readonly string[]).includes(h));
        continue;
      }
      // A blank line is not a row.
      if (record.cells.every((c) => c.trim() === '')) continue;
      this.rows++;
      const cell = (name: string) => {
        const i = this.header!.indexOf(name);
        return i < 0 ? '' : unguard(record.cells[i] ?? '').trim();
      };
      const row: ListingCsvRow = {
        row: this.rows,
        line: record.line,
        sku: cell('sku'),
        url: cell('url'),
        competitor: cell('competitor'),
        problems: [],
      };
      if (row.sku === '')
        row.problems.push({ field: 'sku', message: 'is required: the SKU of the product the page shows' });
      if (row.url === '')
        row.problems.push({ field: 'url', message: "is required: the address of the competitor's page" });
      out.push(row);
    }
    return out;
  }
}

/** Every row of a listings CSV held in memory (the dashboard's upload or paste). */
export function readListingsCsv(text: string): { rows: ListingCsvRow[]; ignored: string[] } {
  const reader = new ListingCsvReader();
  const rows = [...reader.push(text), ...reader.end()];
  return { rows, ignored: reader.ignored };
}

/**
 * What became of a row: `created`; `present` (the product already has a listing at that URL:
 * nothing changed, so an import run twice creates nothing twice); `failed` (`problems` say why).
 */
export type ListingImportResult = 'created' | 'present' | 'failed';

export interface ImportedListing {
  row: number;
  line: number;
  sku: string;
  url: string;
  competitor: string;
  result: ListingImportResult;
  /** The listing created or found. */
  listingId?: string;
  /** Its competitor (found by name or id, or by the URL's domain). */
  competitorId?: string;
  problems: ErrorDetail[];
}

export interface ListingImportOptions {
  /** Rows per POST /listings/batch, 1 to 1000 (default 1000). */
  batchSize?: number;
  signal?: AbortSignal;
  /** The Idempotency-Key of the batch of these rows (default: a new one per request). */
  idempotencyKey?(rows: readonly ListingCsvRow[]): string | undefined;
}

const COMPETITOR_ID = /^comp_[0-9A-Za-z]+$/;
/** The CSV column an API field is about. */
const COLUMN_OF: Record<string, string> = {
  product_sku: 'sku',
  product_id: 'sku',
  competitor_id: 'competitor',
  url: 'url',
};

/** The account's competitors by name (lower case), read once (a request per 100 competitors): ids, or several when the name is shared. */
async function competitorNames(
  client: PricehoundClient,
  signal: AbortSignal | undefined,
): Promise<Map<string, string[]>> {
  const byName = new Map<string, string[]>();
  for await (const c of client.paginate('/api/v1/competitors', { signal })) {
    const key = c.name.trim().toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), c.id]);
  }
  return byName;
}

/**
 * Imports listings read from a CSV (`ListingCsvReader`), a batch at a time, yielding each batch's
 * rows with what became of them: the CLI's `import listings` and the dashboard's import. Rows the
 * reader refused, and competitor names the account does not have (or has twice), are `failed`
 * without a request; the others go to POST /listings/batch.
 */
export async function* importListings(
  client: PricehoundClient,
  rows: Iterable<ListingCsvRow> | AsyncIterable<ListingCsvRow>,
  options: ListingImportOptions = {},
): AsyncGenerator<ImportedListing[], void, undefined> {
  // Read when a first row names a competitor by name.
  let names: Map<string, string[]> | undefined;
  const send = async (batch: ListingCsvRow[]) => {
    if (!names && batch.some((r) => r.competitor !== '' && !COMPETITOR_ID.test(r.competitor)))
      names = await competitorNames(client, options.signal);
    return importBatch(client, batch, names, options);
  };
  yield* streamBatches(rows, options.batchSize ?? BATCH_MAX, send);
}

async function importBatch(
  client: PricehoundClient,
  rows: ListingCsvRow[],
  names: Map<string, string[]> | undefined,
  options: ListingImportOptions,
): Promise<ImportedListing[]> {
  const out: ImportedListing[] = [];
  const seen = (
    row: ListingCsvRow,
    result: ListingImportResult,
    problems: ErrorDetail[],
    ids: { listingId?: string; competitorId?: string } = {},
  ) =>
    out.push({
      row: row.row,
      line: row.line,
      sku: row.sku,
      url: row.url,
      competitor: row.competitor,
      result,
      problems,
      ...ids,
    });
  const send: { row: ListingCsvRow; item: ListingInput }[] = [];
  for (const row of rows) {
    if (row.problems.length > 0) {
      seen(row, 'failed', row.problems);
      continue;
    }
    const item: ListingInput = { product_sku: row.sku, url: row.url };
    if (COMPETITOR_ID.test(row.competitor)) item.competitor_id = row.competitor;
    else if (row.competitor !== '') {
      const ids = names?.get(row.competitor.toLowerCase()) ?? [];
      if (ids.length !== 1) {
        const message =
          ids.length === 0
            ? "is not the name of a competitor of this account (leave it empty to use the URL's domain)"
            : `names ${ids.length} competitors: use the id of one (${ids.join(', ')})`;
        seen(row, 'failed', [{ field: 'competitor', message }]);
        continue;
      }
      item.competitor_id = ids[0]!;
    }
    send.push({ row, item });
  }
  if (send.length > 0) {
    const key = options.idempotencyKey?.(send.map((s) => s.row));
    const answer = await client.POST('/api/v1/listings/batch', {
      body: { listings: send.map((s) => s.item) },
      ...(key ? { params: { header: { 'Idempotency-Key': key } } } : {}),
      signal: options.signal,
    });
    for (const item of answer.data) {
      const { row } = send[item.index]!;
      if (item.status === 201) {
        seen(row, 'created', [], {
          listingId: item.listing.id,
          ...(item.listing.competitor_id ? { competitorId: item.listing.competitor_id } : {}),
        });
        continue;
      }
      const details = item.error.details?.length ? item.error.details : [{ field: '', message: item.error.error }];
      const problems = details.map((d) => ({ field: COLUMN_OF[d.field] ?? d.field, message: d.message }));
      const listed =
        item.status === 409 && details.some((d) => d.field === 'url' && d.message.startsWith('is already monitored'));
      const listingId = listed ? /listing (lst_[0-9A-Za-z]+)/.exec(details[0]!.message)?.[1] : undefined;
      seen(row, listed ? 'present' : 'failed', listed ? [] : problems, listingId ? { listingId } : {});
    }
  }
  return out.sort((a, b) => a.row - b.row);
}

/** The error report of a listing import: a CSV with these columns, a line per problem. */
export const LISTING_IMPORT_ERROR_COLUMNS = ['row', 'line', 'sku', 'url', 'competitor', 'field', 'message'] as const;
export function listingImportErrorRows(
  e: Pick<ImportedListing, 'row' | 'line' | 'sku' | 'url' | 'competitor' | 'problems'>,
): string {
  return e.problems.map((d) => csvRow([e.row, e.line, e.sku, e.url, e.competitor, d.field, d.message])).join('');
}
