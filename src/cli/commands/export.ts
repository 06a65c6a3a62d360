import fs from 'node:fs';
import { once } from 'node:events';
import { csvRow, type CsvValue } from '../../http/csv.js';
import { type AccountApi, accountApi, apiKeyOf, withOperations } from '../account-api.js';
import { type Command, note } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { IMPORT_COLUMNS } from './import-products.js';

interface Page<T> {
  data: T[];
  pagination: { has_more: boolean; next_cursor: string | null };
}

type Item = Record<string, unknown>;

/** `pricehound import products` reads these columns back: an export is an import file. */
const PRODUCT_COLUMNS = [...IMPORT_COLUMNS, 'id', 'created_at', 'updated_at'] as const;
const PRICE_COLUMNS = ['product_id', 'sku', 'competitor_id', 'listing_id', 'price', 'currency', 'in_stock', 'observed_at', 'source', 'id'] as const;

/** The filters of GET /products, as options: --min-price is min_price. */
const PRODUCT_FILTERS = ['category', 'brand', 'sku', 'currency', 'min-price', 'max-price', 'q', 'created-after', 'created-before', 'sort'] as const;
const filterOptions = Object.fromEntries(PRODUCT_FILTERS.map((f) => [f, { type: 'string' as const }]));

const COMMON_OPTIONS = {
  key: { type: 'string' as const },
  out: { type: 'string' as const },
  format: { type: 'string' as const },
  ...filterOptions,
};

const COMMON_HELP = `  --key KEY            the API key (default: $PRICEHOUND_KEY)
  --out FILE           write to FILE (default: stdout)
  --format csv|jsonl   CSV with a header row (default), or one JSON object per line
Product filters, as GET /products has them:
  --category C, --brand B, --sku S, --currency EUR, --min-price N, --max-price N, --q TEXT,
  --created-after T, --created-before T (RFC 3339), --sort FIELD|-FIELD
  -h, --help           show this help`;

/** Writes to a file or stdout, waiting when the consumer is slower than the pages come. */
function sink(file: string | undefined) {
  const stream = file ? fs.createWriteStream(file) : process.stdout;
  return {
    async write(text: string) {
      if (!stream.write(text)) await once(stream, 'drain');
    },
    async end() {
      if (stream === process.stdout) return;
      stream.end();
      await once(stream, 'finish');
    },
  };
}

function productQuery(values: Record<string, unknown>): URLSearchParams {
  const q = new URLSearchParams();
  for (const f of PRODUCT_FILTERS) {
    const v = values[f];
    if (typeof v === 'string') q.set(f.replace(/-/g, '_'), v);
  }
  return q;
}

const DAY_MS = 86_400_000;
/** The raw history answers at most this span per request (GET /products/{id}/prices). */
const HISTORY_WINDOW_MS = 366 * DAY_MS;

/** [from, to) cut into spans the history answers, oldest first. */
function windows(from: Date, to: Date): [Date, Date][] {
  const out: [Date, Date][] = [];
  for (let a = from.getTime(); a < to.getTime(); a += HISTORY_WINDOW_MS) out.push([new Date(a), new Date(Math.min(a + HISTORY_WINDOW_MS, to.getTime()))]);
  return out;
}

function instant(value: unknown, fallback: Date, option: string, command: string): Date {
  if (value === undefined) return fallback;
  const d = new Date(String(value));
  if (typeof value !== 'string' || Number.isNaN(d.getTime())) throw new UsageError(`${option} must be a date and time (RFC 3339), got "${String(value)}"`, command);
  return d;
}

/** Every page of a list endpoint, one request (one bounded page) at a time. */
async function* pages<T>(api: AccountApi, path: string, query: URLSearchParams): AsyncGenerator<T[]> {
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams(query);
    if (cursor) q.set('cursor', cursor);
    const page: Page<T> = await api.json<Page<T>>('GET', `${path}?${q.toString()}`);
    yield page.data;
    cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
  } while (cursor);
}

function format(values: Record<string, unknown>, command: string): 'csv' | 'jsonl' {
  const f = values.format ?? 'csv';
  if (f !== 'csv' && f !== 'jsonl') throw new UsageError(`--format must be csv or jsonl, got "${String(f)}"`, command);
  return f;
}

const cellsOf = (item: Item, columns: readonly string[]): CsvValue[] =>
  columns.map((c) => {
    const v = item[c];
    return v === undefined || v === null || typeof v === 'object' ? null : (v as CsvValue);
  });

async function exportRows(
  values: Record<string, unknown>,
  command: string,
  columns: readonly string[],
  rows: (api: AccountApi) => AsyncGenerator<Item[]>,
): Promise<number> {
  const key = apiKeyOf(values, command);
  const fmt = format(values, command);
  const file = typeof values.out === 'string' ? values.out : undefined;
  const out = sink(file);
  let count = 0;
  await withOperations(async (ops) => {
    if (fmt === 'csv') await out.write(csvRow(columns));
    for await (const page of rows(accountApi(ops, key))) {
      let chunk = '';
      for (const item of page) chunk += fmt === 'csv' ? csvRow(cellsOf(item, columns)) : `${JSON.stringify(item)}\n`;
      count += page.length;
      if (chunk) await out.write(chunk);
    }
  });
  await out.end();
  if (file) note(`Exported ${count} rows to ${file}.`);
  return EXIT.ok;
}

export const exportProducts: Command = {
  name: 'export products',
  summary: 'Export products as CSV or JSON lines',
  positionals: [0, 0],
  options: COMMON_OPTIONS,
  help: `Usage: pricehound export products [--out FILE] [--format csv|jsonl] [filters]

Writes the products of the API key's account (PRICEHOUND_KEY, or --key), read a page of 100
at a time through GET /products: only one page is held at a time, whatever the catalogue's
size. CSV columns: ${PRODUCT_COLUMNS.join(', ')}; the file
can be imported again with \`pricehound import products\`. JSON lines: the API's product objects.
Works whether or not the server is running.

Options:
${COMMON_HELP}
`,
  async run(values) {
    return exportRows(values, this.name, PRODUCT_COLUMNS, (api) => {
      const q = productQuery(values);
      q.set('limit', '100');
      return pages<Item>(api, '/products', q);
    });
  },
};

export const exportPrices: Command = {
  name: 'export prices',
  summary: 'Export price observations as CSV or JSON lines',
  positionals: [0, 0],
  options: { ...COMMON_OPTIONS, from: { type: 'string' }, to: { type: 'string' }, competitor: { type: 'string' } },
  help: `Usage: pricehound export prices [--from T] [--to T] [--competitor ID|own] [--out FILE] [--format csv|jsonl] [filters]

Writes the price observations (ours and competitors') of the products of the API key's
account (PRICEHOUND_KEY, or --key) between --from and --to, product by product, oldest first,
read through GET /products/{id}/prices?interval=raw a page of up to 1000 at a time: only one
page is held at a time. CSV columns: ${PRICE_COLUMNS.join(', ')}.
JSON lines: the API's observation objects, with the product's id and sku.
Works whether or not the server is running.

Options:
  --from T             start of the range (RFC 3339), inclusive; default: 30 days before --to
  --to T               end of the range (RFC 3339), exclusive; default: now
  --competitor ID      only this competitor's observations (comp_...), or \`own\` for ours
${COMMON_HELP}
`,
  async run(values) {
    // One `to` for the whole run: left to each request, the default range would move while the pages are read.
    const to = instant(values.to, new Date(), '--to', this.name);
    const from = instant(values.from, new Date(to.getTime() - 30 * DAY_MS), '--from', this.name);
    if (from >= to) throw new UsageError('--from must be before --to', this.name);
    return exportRows(values, this.name, PRICE_COLUMNS, async function* (api) {
      const productQ = productQuery(values);
      productQ.set('limit', '100');
      for await (const products of pages<Item>(api, '/products', productQ)) {
        for (const product of products) {
          for (const [start, end] of windows(from, to)) {
            const historyQ = new URLSearchParams({ interval: 'raw', limit: '1000', from: start.toISOString(), to: end.toISOString() });
            if (typeof values.competitor === 'string') historyQ.set('competitor_id', values.competitor);
            // The history's items leave out the product they are the history of.
            for await (const observations of pages<Item>(api, `/products/${String(product.id)}/prices`, historyQ)) {
              yield observations.map((o) => ({ ...o, product_id: product.id, sku: product.sku ?? null }));
            }
          }
        }
      }
    });
  },
};
