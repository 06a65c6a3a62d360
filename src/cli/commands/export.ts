import fs from 'node:fs';
import { once } from 'node:events';
import { CsvReader, csvRow, PRODUCT_EXPORT_COLUMNS, productCsvRow, unguard } from '@pricehound/client';
import { ACCOUNT_HELP, ACCOUNT_OPTIONS, type AccountClient, accountClient, cost } from '../account.js';
import { type Command, note } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { DAY_MS } from '../../time.js';

/** The filters of GET /products (and GET /prices.csv), as options: --min-price is min_price. */
const PRODUCT_FILTERS = [
  'category',
  'brand',
  'sku',
  'currency',
  'min-price',
  'max-price',
  'q',
  'created-after',
  'created-before',
  'sort',
] as const;
const filterOptions = Object.fromEntries(PRODUCT_FILTERS.map((f) => [f, { type: 'string' as const }]));

const COMMON_OPTIONS = {
  ...ACCOUNT_OPTIONS,
  out: { type: 'string' as const },
  format: { type: 'string' as const },
  ...filterOptions,
};

const COMMON_HELP = `${ACCOUNT_HELP}
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

/** The product filters given, as the API's query parameters. */
function productQuery(values: Record<string, unknown>): Record<string, string> {
  const q: Record<string, string> = {};
  for (const f of PRODUCT_FILTERS) {
    const v = values[f];
    if (typeof v === 'string') q[f.replace(/-/g, '_')] = v;
  }
  return q;
}

function format(values: Record<string, unknown>, command: string): 'csv' | 'jsonl' {
  const f = values.format ?? 'csv';
  if (f !== 'csv' && f !== 'jsonl') throw new UsageError(`--format must be csv or jsonl, got "${String(f)}"`, command);
  return f;
}

function instant(value: unknown, fallback: Date, option: string, command: string): Date {
  if (value === undefined) return fallback;
  const d = new Date(String(value));
  if (typeof value !== 'string' || Number.isNaN(d.getTime()))
    throw new UsageError(`${option} must be a date and time (RFC 3339), got "${String(value)}"`, command);
  return d;
}

/** Runs an export: the rows `write` writes, then a note of where they went and what they cost. */
async function exportTo(
  values: Record<string, unknown>,
  command: string,
  write: (account: AccountClient, out: ReturnType<typeof sink>, fmt: 'csv' | 'jsonl') => Promise<number>,
) {
  const account = accountClient(values, command);
  const fmt = format(values, command);
  const file = typeof values.out === 'string' ? values.out : undefined;
  const out = sink(file);
  const rows = await write(account, out, fmt);
  await out.end();
  note(
    `Exported ${rows} row${rows === 1 ? '' : 's'}${file ? ` to ${file}` : ''} from ${account.url}. Cost: ${cost(account.requests, account.ph.usage)}.`,
  );
  return EXIT.ok;
}

export const exportProducts: Command = {
  name: 'export products',
  positionals: [0, 0],
  options: COMMON_OPTIONS,
  help: `Usage: pricehound export products [--url URL] [--key KEY] [--out FILE] [--format csv|jsonl] [filters]

Writes the products of the API key's account on the server at --url, read 100 at a time
through GET /products (a request per 100 products, counted against the key's hourly limit):
only one page is held at a time, whatever the catalogue's size. CSV columns:
${PRODUCT_EXPORT_COLUMNS.join(', ')}; text a spreadsheet would run gets a leading '.
The file imports again with \`pricehound import products\` (which takes the ' off).
JSON lines: the API's product objects.

Options:
${COMMON_HELP}
`,
  async run(values) {
    return exportTo(values, this.name, async ({ ph }, out, fmt) => {
      let count = 0;
      if (fmt === 'csv') await out.write(csvRow(PRODUCT_EXPORT_COLUMNS));
      for await (const page of ph.pages('/api/v1/products', { params: { query: productQuery(values) } })) {
        await out.write(page.map((p) => (fmt === 'csv' ? productCsvRow(p) : `${JSON.stringify(p)}\n`)).join(''));
        count += page.length;
      }
      return count;
    });
  },
};

/** GET /prices.csv answers at most this span per request. */
const WINDOW_MS = 366 * DAY_MS;

/** [from, to) cut into the spans one request answers, oldest first. */
function windows(from: Date, to: Date): [Date, Date][] {
  const out: [Date, Date][] = [];
  for (let a = from.getTime(); a < to.getTime(); a += WINDOW_MS)
    out.push([new Date(a), new Date(Math.min(a + WINDOW_MS, to.getTime()))]);
  return out;
}

/** A CSV cell of GET /prices.csv as JSON: numbers, booleans and nulls as such, text without the formula guard. */
const NUMERIC = new Set(['price', 'samples', 'price_sum']);
function jsonCell(column: string, cell: string): unknown {
  if (cell === '') return null;
  if (NUMERIC.has(column)) return Number(cell);
  if (column === 'in_stock') return cell === 'true';
  return unguard(cell);
}

export const exportPrices: Command = {
  name: 'export prices',
  positionals: [0, 0],
  options: { ...COMMON_OPTIONS, from: { type: 'string' }, to: { type: 'string' }, competitor: { type: 'string' } },
  help: `Usage: pricehound export prices [--from T] [--to T] [--competitor ID|own] [--url URL] [--key KEY] [--out FILE] [--format csv|jsonl] [filters]

Writes the price observations (ours and competitors') of the products of the API key's
account on the server at --url between --from and --to, product after product, each oldest
first: the streamed CSV of GET /prices.csv, one request per 366 days of the range however
many products there are (each request counted once against the key's hourly limit; the note
at the end says how many were made and what is left). CSV columns: product_id, sku,
observed_at, competitor_id, competitor_name, listing_id, price, currency, in_stock, source,
samples, price_sum, id. JSON lines: one object per observation with those keys.

Options:
  --from T             start of the range (RFC 3339), inclusive; default: 30 days before --to
  --to T               end of the range (RFC 3339), exclusive; default: now
  --competitor ID      only this competitor's observations (comp_...), or \`own\` for ours
${COMMON_HELP}
`,
  async run(values) {
    // One `to` for the whole run: left to each request, the default range would move while it runs.
    const to = instant(values.to, new Date(), '--to', this.name);
    const from = instant(values.from, new Date(to.getTime() - 30 * DAY_MS), '--from', this.name);
    if (from >= to) throw new UsageError('--from must be before --to', this.name);
    return exportTo(values, this.name, async ({ ph }, out, fmt) => {
      let count = 0;
      let first = true;
      for (const [start, end] of windows(from, to)) {
        const query = {
          ...productQuery(values),
          from: start.toISOString(),
          to: end.toISOString(),
          ...(typeof values.competitor === 'string' ? { competitor_id: [values.competitor] } : {}),
        };
        const body = await ph.GET('/api/v1/prices.csv', { params: { query }, parseAs: 'stream' });
        if (!body) continue;
        // CSV goes out as the service wrote it (one header row for the whole file); the reader
        // counts the rows, and makes the JSON lines.
        const csv = new CsvReader();
        const decoder = new TextDecoder();
        let header: string[] | undefined;
        let headerText = first ? undefined : '';
        first = false;
        const take = async (text: string, records: { cells: string[] }[]) => {
          let chunk = '';
          for (const { cells } of records) {
            if (!header) {
              header = cells;
              continue;
            }
            count++;
            if (fmt === 'jsonl')
              chunk += `${JSON.stringify(Object.fromEntries(header.map((c, i) => [c, jsonCell(c, cells[i] ?? '')])))}\n`;
          }
          if (fmt === 'csv') {
            if (headerText !== undefined) {
              // A later window: its header line is not written again.
              headerText += text;
              const end = headerText.indexOf('\n');
              if (end < 0) return;
              text = headerText.slice(end + 1);
              headerText = undefined;
            }
            chunk = text;
          }
          if (chunk) await out.write(chunk);
        };
        for await (const piece of body as AsyncIterable<Uint8Array>) {
          const text = decoder.decode(piece, { stream: true });
          await take(text, csv.push(text));
        }
        const rest = decoder.decode();
        await take(rest, [...csv.push(rest), ...csv.end()]);
      }
      return count;
    });
  },
};
