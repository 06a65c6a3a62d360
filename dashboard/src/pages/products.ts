import {
  csvRow,
  IMPORT_ERROR_COLUMNS,
  type ImportedRow,
  importErrorRows,
  importProducts,
  PRODUCT_CSV_COLUMNS,
  PRODUCT_CSV_REQUIRED,
  readProductsCsv,
} from '@pricehound/client';
import { ph } from '../api';
import { type Child, h, put } from '../dom';
import { count, money, number, percent, relative } from '../format';
import { forgetProduct, rememberProduct } from '../names';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type { Product, Query } from '../types';
import {
  badge,
  checkbox,
  confirmDialog,
  emptyState,
  errorBox,
  field,
  fold,
  loadInto,
  section,
  loading,
  modal,
  listPager,
  POSITION_WORDS,
  positionClass,
  selectField,
  table,
  toast,
  withBusy,
} from '../ui';
import { combobox, optionFor } from '../combobox';
import {
  type HistogramBin,
  listPositions,
  POSITION_SORTS,
  POSITION_STANDINGS,
  type PositionQuery,
  type PositionRow,
  positionSummary,
  unavailable,
} from '../positions';
import { openProductForm } from './product-form';

const FILTERS = [
  'q',
  'brand',
  'category',
  'currency',
  'min_price',
  'max_price',
  'sort',
  'standing',
  'undercut',
  'rank_min',
  'rank_max',
  'gap_percent_min',
  'gap_percent_max',
  'competitor_id',
] as const;
/** Filters only GET /positions has: with any of them (or a position sort) the list is the positions'. */
const POSITION_FILTERS = [
  'standing',
  'undercut',
  'rank_min',
  'rank_max',
  'gap_percent_min',
  'gap_percent_max',
  'competitor_id',
] as const;
const isStanding = (v: string | undefined): v is NonNullable<PositionQuery['standing']> =>
  POSITION_STANDINGS.some(([s]) => s === v);
const isPositionSort = (v: string | undefined): v is NonNullable<PositionQuery['sort']> =>
  POSITION_SORTS.some(([s]) => s === v);
type ProductQuery = Query<'/api/v1/products'>;
type Sort = NonNullable<ProductQuery['sort']>;
const SORTS: [Sort, string][] = [
  ['-created_at', 'Newest first'],
  ['created_at', 'Oldest first'],
  ['name', 'Name A–Z'],
  ['-name', 'Name Z–A'],
  ['base_price', 'Base price, low to high'],
  ['-base_price', 'Base price, high to low'],
  ['sku', 'SKU'],
  ['brand', 'Brand'],
  ['category', 'Category'],
  ['-updated_at', 'Recently changed'],
];

const isSort = (v: string | undefined): v is Sort => SORTS.some(([s]) => s === v);
const amount = (v: string | undefined) => (v === undefined ? undefined : Number(v));

/** The page's filters (as the address holds them) as GET /products takes them. */
function productQuery(f: Record<string, string>): Omit<ProductQuery, 'limit' | 'cursor'> {
  return {
    q: f.q,
    brand: f.brand,
    category: f.category,
    currency: f.currency,
    min_price: amount(f.min_price),
    max_price: amount(f.max_price),
    sort: isSort(f.sort) ? f.sort : undefined,
  };
}

export function positionCell(p: Product): Child {
  const pos = p.monitoring.position;
  const kind = positionClass(pos.rank, pos.competitors_compared);
  if (kind === 'none') return h('span', { class: 'muted' }, 'not compared');
  return h(
    'span',
    { class: 'position' },
    badge(`#${pos.rank} of ${pos.competitors_compared + 1}`, kind),
    h('span', { class: 'sr-only' }, ` (${POSITION_WORDS[kind]})`),
    ' ',
    h('span', { title: "Price index: our price / the competitors' average × 100" }, `index ${number(pos.price_index)}`),
  );
}

/**
 * The cheapest compared competitor of `monitoring.position` (the one GET /positions names), its
 * price converted into the product's currency: the same comparison as the Position column.
 * (`monitoring.lowest_competitor_price` only knows checked listings in the product's own
 * currency, so a price sent through POST /prices or in another currency would show nothing.)
 */
export function cheapestCell(p: Product): Child {
  const c = p.monitoring.position.cheapest;
  if (!c) return '—';
  return h('span', null, c.name, h('br'), h('span', { class: 'money' }, money(c.price, p.currency)));
}

export async function productsPage(ctx: PageContext): Promise<void> {
  const q = ctx.query;
  const filters: Record<string, string> = {};
  for (const k of FILTERS) {
    const v = q.get(k);
    if (v) filters[k] = v;
  }
  const cursor = q.get('cursor');

  const newButton = h('button', { type: 'button', onclick: () => void create() }, 'New product');
  const importButton = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => void openImport(() => void reload()) },
    'Import CSV',
  );
  const exportButton = h('button', { type: 'button', class: 'secondary' }, 'Export CSV');
  exportButton.addEventListener('click', () => void withBusy(exportButton, null, () => exportCsv(filters)));
  pageHeader(ctx, 'Products', h('div', { class: 'toolbar' }, newButton, importButton, exportButton));

  const undercutBy = combobox({
    kind: 'competitor',
    name: 'competitor_id',
    label: 'Undercut by',
    anyLabel: 'Any competitor',
    value: filters.competitor_id
      ? await optionFor('competitor', filters.competitor_id, ctx.signal).then(
          (o) => o ?? { id: filters.competitor_id!, label: filters.competitor_id! },
        )
      : null,
  });
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter products' },
    field({ name: 'q', label: 'Search', type: 'search', value: filters.q, hint: 'Name, brand, SKU or description' }),
    field({ name: 'brand', label: 'Brand', value: filters.brand }),
    field({ name: 'category', label: 'Category', value: filters.category }),
    field({ name: 'currency', label: 'Currency', value: filters.currency, maxlength: 3 }),
    field({ name: 'min_price', label: 'Min base price', value: filters.min_price, inputmode: 'decimal' }),
    field({ name: 'max_price', label: 'Max base price', value: filters.max_price, inputmode: 'decimal' }),
    selectField({
      name: 'sort',
      label: 'Sort',
      options: [...SORTS, ...POSITION_SORTS],
      value: filters.sort ?? '-created_at',
    }),
    selectField({
      name: 'standing',
      label: 'Standing',
      options: [['', 'Any'], ...POSITION_STANDINGS],
      value: filters.standing ?? '',
    }),
    checkbox({ name: 'undercut', label: 'Only where a competitor is cheaper', checked: filters.undercut === 'true' }),
    field({
      name: 'rank_min',
      label: 'Rank from',
      type: 'number',
      min: '1',
      value: filters.rank_min,
      hint: '1 = cheapest',
    }),
    field({ name: 'rank_max', label: 'Rank to', type: 'number', min: '1', value: filters.rank_max }),
    field({
      name: 'gap_percent_min',
      label: 'Gap from (%)',
      inputmode: 'decimal',
      value: filters.gap_percent_min,
      hint: "Our price over the cheapest competitor's",
    }),
    field({ name: 'gap_percent_max', label: 'Gap to (%)', inputmode: 'decimal', value: filters.gap_percent_max }),
    undercutBy.el,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply'),
      h('a', { href: '#/products', class: 'button secondary' }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next: Record<string, string> = {};
    if (undercutBy.unresolved()) {
      (undercutBy.el.querySelector('input[role=combobox]') as HTMLInputElement).focus();
      return;
    }
    for (const k of FILTERS) {
      const el = form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement | null;
      const v =
        el instanceof HTMLInputElement && el.type === 'checkbox'
          ? el.checked
            ? 'true'
            : ''
          : (el?.value.trim() ?? '');
      if (v && !(k === 'sort' && v === '-created_at')) next[k] = v;
    }
    go('/products', next);
  });
  const listSlot = h('div', { 'aria-live': 'polite' }, loading('Loading products…'));
  const chartSlot = h('div', { 'data-testid': 'index-chart' }, loading('Loading the price index…'));
  ctx.main.append(
    fold('Filters and sort', Object.keys(filters).length, form),
    listSlot,
    section('Price index of the products compared', chartSlot),
  );
  void renderIndexChart(ctx, chartSlot);
  const byPosition = POSITION_FILTERS.some((k) => filters[k] !== undefined) || isPositionSort(filters.sort);
  if (byPosition) {
    await loadInto(
      listSlot,
      ctx.signal,
      async () => {
        try {
          return await listPositions(
            {
              q: filters.q,
              brand: filters.brand,
              category: filters.category,
              standing: isStanding(filters.standing) ? filters.standing : undefined,
              undercut: filters.undercut === 'true' ? true : undefined,
              rank_min: amount(filters.rank_min),
              rank_max: amount(filters.rank_max),
              gap_percent_min: amount(filters.gap_percent_min),
              gap_percent_max: amount(filters.gap_percent_max),
              competitor_id: filters.competitor_id,
              sort: isPositionSort(filters.sort) ? filters.sort : undefined,
              cursor: cursor ?? undefined,
              limit: 25,
            },
            ctx.signal,
          );
        } catch (err) {
          if (unavailable(err)) return null;
          throw err;
        }
      },
      (page) =>
        page === null
          ? emptyState(
              'Sorting and filtering by position needs GET /api/v1/positions, which this server does not have yet. Clear the position filters to list the products.',
            )
          : [
              positionsTable(page.data, Object.keys(filters).length > 0),
              listPager('/products', filters, cursor, page.pagination),
            ],
      'Loading positions…',
    );
    return;
  }

  const create = async () => {
    const p = await openProductForm(null);
    if (p) go(`/products/${p.id}`);
  };

  const reload = async () => {
    try {
      const page = await ph.GET('/api/v1/products', {
        params: { query: { ...productQuery(filters), cursor: cursor ?? undefined, limit: 25 } },
        signal: ctx.signal,
      });
      page.data.forEach(rememberProduct);
      put(
        listSlot,
        table(
          `Products${filters.q ? ` matching “${filters.q}”` : ''}`,
          [
            {
              title: 'Name',
              cell: (p) => h('a', { href: href(`/products/${p.id}`), 'data-testid': 'product-link' }, p.name),
            },
            { title: 'SKU', class: 'nowrap', cell: (p) => p.sku ?? '—' },
            { title: 'Brand', cell: (p) => p.brand ?? '—' },
            { title: 'Category', cell: (p) => p.category ?? '—' },
            { title: 'Base price', class: 'num', cell: (p) => money(p.base_price, p.currency) },
            { title: 'Our price', class: 'num', cell: (p) => money(p.monitoring.position.own_price, p.currency) },
            { title: 'Position', cell: (p) => positionCell(p) },
            { title: 'Cheapest competitor', cell: (p) => cheapestCell(p) },
            { title: 'Listings', class: 'num', cell: (p) => count(p.monitoring.listing_count) },
            { title: 'Last checked', cell: (p) => relative(p.monitoring.last_checked_at) },
            {
              title: 'Actions',
              cell: (p) =>
                h(
                  'div',
                  { class: 'row-actions' },
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Edit ${p.name}`,
                      onclick: () => void edit(p),
                    },
                    'Edit',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger small',
                      'aria-label': `Delete ${p.name}`,
                      onclick: () => void remove(p),
                    },
                    'Delete',
                  ),
                ),
            },
          ],
          page.data,
          Object.keys(filters).length > 0
            ? 'No product matches these filters.'
            : 'No products yet: create one or import a CSV file.',
        ),
        listPager('/products', filters, cursor, page.pagination),
      );
    } catch (err) {
      if (!ctx.signal.aborted) put(listSlot, errorBox(err, { retry: reload }));
    }
  };

  const edit = async (p: Product) => {
    if (await openProductForm(p)) await reload();
  };
  const remove = async (p: Product) => {
    if (
      !(await confirmDialog(`Delete “${p.name}”? Its listings, alerts and price history go with it.`, 'Delete product'))
    )
      return;
    await withBusy(null, null, async () => {
      await ph.DELETE('/api/v1/products/{id}', { params: { path: { id: p.id } } });
      forgetProduct(p.id);
      toast(`Deleted ${p.name}.`);
      await reload();
    });
  };

  await reload();
}

/** The list as GET /positions gives it: where each product stands, its gap to the cheapest competitor. */
function positionsTable(rows: PositionRow[], filtered: boolean): HTMLElement {
  return table(
    'Products by position',
    [
      {
        title: 'Name',
        cell: (p: PositionRow) =>
          h('a', { href: href(`/products/${p.product_id}`), 'data-testid': 'product-link' }, p.name),
      },
      { title: 'SKU', class: 'nowrap', cell: (p) => p.sku ?? '—' },
      { title: 'Our price', class: 'num', cell: (p) => money(p.own_price, p.currency) },
      {
        title: 'Rank',
        cell: (p) => {
          const kind = positionClass(p.rank, p.of - 1);
          return [
            badge(`#${p.rank ?? '—'} of ${p.of}`, kind),
            h('span', { class: 'sr-only' }, ` (${POSITION_WORDS[kind]})`),
          ];
        },
      },
      { title: 'Index', class: 'num', cell: (p) => number(p.price_index) },
      {
        title: 'Cheapest competitor',
        cell: (p) =>
          p.cheapest
            ? [p.cheapest.name, h('br'), h('span', { class: 'money' }, money(p.cheapest.price, p.currency))]
            : '—',
      },
      {
        title: 'Gap',
        class: 'num',
        cell: (p) => [money(p.gap_amount, p.currency), h('br'), h('span', { class: 'muted' }, percent(p.gap_percent))],
      },
      { title: 'Undercut by', class: 'num', cell: (p) => count(p.undercut_by) },
      { title: 'Changed', cell: (p) => relative(p.changed_at) },
    ],
    rows,
    filtered ? 'No product stands that way.' : 'No product has a competitor price to compare yet.',
  );
}

/**
 * How the price indexes spread (GET /positions/summary's histogram): one bar per bin, its height
 * the share of products there, with the numbers as a table for screen readers and for reading.
 */
async function renderIndexChart(ctx: PageContext, slot: HTMLElement): Promise<void> {
  await loadInto(
    slot,
    ctx.signal,
    async () => {
      try {
        return await positionSummary(ctx.signal);
      } catch (err) {
        if (unavailable(err)) return null;
        throw err;
      }
    },
    (s) => {
      if (s === null)
        return emptyState(
          'The price index chart needs GET /api/v1/positions/summary, which this server does not have yet.',
        );
      if (s.histogram.every((b) => b.count === 0))
        return emptyState('No product has a competitor price to compare yet.');
      const max = Math.max(...s.histogram.map((b) => b.count));
      const bound = (v: number | null, open: string) => (v === null ? open : number(v));
      const label = (b: HistogramBin) => `${bound(b.from, 'below')}–${bound(b.to, 'above')}`;
      const bars = s.histogram.map((b) => {
        const bar = h('span', { class: 'bar' });
        // Set from the script (not an inline style attribute, which the CSP refuses).
        bar.style.height = `${max > 0 ? Math.max(b.count > 0 ? 2 : 0, (b.count / max) * 100) : 0}%`;
        return h(
          'li',
          {
            class: `bin${b.to !== null && b.to <= 100 ? ' below' : b.from !== null && b.from >= 100 ? ' above' : ''}`,
            title: `Index ${label(b)}: ${count(b.count)} products`,
          },
          h('span', { class: 'bin-count' }, count(b.count)),
          h('span', { class: 'bar-area' }, bar),
          h('span', { class: 'bin-label' }, b.from === null ? `< ${number(b.to ?? 0)}` : number(b.from)),
        );
      });
      return [
        h(
          'p',
          { class: 'hint' },
          "Price index: our price over the competitors' average × 100. Under 100 we are cheaper than the market, over 100 dearer.",
        ),
        h('ol', { class: 'histogram', 'aria-hidden': 'true' }, bars),
        h(
          'details',
          { class: 'data-table' },
          h('summary', null, 'The numbers'),
          table(
            'Products per price index',
            [
              { title: 'Index', cell: (b: HistogramBin) => label(b) },
              { title: 'Products', class: 'num', cell: (b) => count(b.count) },
            ],
            s.histogram,
          ),
        ),
      ];
    },
  );
}

/** GET /products.csv with the current filters, saved as a file (a plain link could not send the key). */
async function exportCsv(filters: Record<string, string>): Promise<void> {
  const blob = await ph.GET('/api/v1/products.csv', { params: { query: productQuery(filters) }, parseAs: 'blob' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: 'products.csv', class: 'sr-only' }, 'download');
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
  toast('Exported products.csv.');
}

// ---- CSV import ----

/** Items per POST /products/batch: small enough for steady progress, large enough to be quick (the API takes 1000). */
export const IMPORT_CHUNK = 200;

interface RowError {
  line: number;
  name: string;
  field: string;
  message: string;
}

function openImport(done: () => void): void {
  const fileId = 'import-file';
  const input = h('input', {
    id: fileId,
    name: 'file',
    type: 'file',
    accept: '.csv,text/csv',
    required: true,
    'aria-describedby': 'import-help',
  });
  const update = checkbox({
    name: 'update',
    label: 'Update the products whose SKU is already there',
    hint: 'Otherwise a row with such a SKU is reported and left out.',
  });
  const start = h('button', { type: 'submit' }, 'Import');
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Close');
  const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Import progress', hidden: true });
  const progressText = h('p', { role: 'status', 'aria-live': 'polite', 'data-testid': 'import-status' });
  const errorsSlot = h('div', { 'data-testid': 'import-errors' });
  let controller: AbortController | null = null;
  const form = h(
    'form',
    { novalidate: true, 'aria-label': 'Import products from CSV' },
    h(
      'p',
      { id: 'import-help' },
      'A header row, then one product per row. Columns: ',
      h('code', null, PRODUCT_CSV_COLUMNS.join(', ')),
      ` (${PRODUCT_CSV_REQUIRED.join(', ')} required). Rows are created in batches of `,
      String(IMPORT_CHUNK),
      '; a bad row is reported and the others are still created. A file exported here (Export CSV) imports as it is.',
    ),
    h('div', { class: 'field' }, h('label', { for: fileId }, 'CSV file'), input),
    update,
    progress,
    progressText,
    errorsSlot,
    h('div', { class: 'actions' }, cancel, start),
  );
  const { close } = modal('Import products', form, { onClose: () => controller?.abort() });
  cancel.addEventListener('click', () => (controller ? controller.abort() : close()));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const file = input.files?.[0];
    if (!file) {
      put(progressText, 'Choose a CSV file first.');
      input.focus();
      return;
    }
    const updating = (form.elements.namedItem('update') as HTMLInputElement).checked;
    void withBusy(start, errorsSlot, async () => {
      controller = new AbortController();
      cancel.textContent = 'Stop';
      try {
        await runImport(await file.text(), updating, controller.signal, progress, progressText, errorsSlot);
      } finally {
        controller = null;
        cancel.textContent = 'Close';
        done();
      }
    });
  });
  input.focus();
}

/** Reads the file with the client's products CSV reader and imports it with its importProducts, as `pricehound import products` does. */
async function runImport(
  text: string,
  update: boolean,
  signal: AbortSignal,
  progress: HTMLProgressElement,
  status: HTMLElement,
  errorsSlot: HTMLElement,
): Promise<void> {
  const { rows, ignored } = readProductsCsv(text);
  const total = rows.length;
  progress.hidden = false;
  progress.max = Math.max(1, total);
  let done = 0;
  const tally = { created: 0, updated: 0, present: 0, failed: 0 };
  const refused: ImportedRow[] = [];
  const report = (final = false) => {
    progress.value = done;
    const errors = tally.failed + (update ? 0 : tally.present);
    put(
      status,
      `${final ? 'Done' : 'Importing'}: ${count(done)} of ${count(total)} rows, ${count(tally.created)} created, ` +
        (update ? `${count(tally.updated)} updated, ${count(tally.present)} unchanged, ` : '') +
        `${count(errors)} with errors.`,
      ignored.length ? ` Columns ignored: ${ignored.join(', ')}.` : '',
    );
  };
  report();
  for await (const batch of importProducts(ph, rows, { batchSize: IMPORT_CHUNK, update, signal })) {
    for (const r of batch) {
      tally[r.result]++;
      if (r.result === 'failed' || (r.result === 'present' && !update)) refused.push(r);
    }
    done += batch.length;
    report();
  }
  report(true);
  const errors: RowError[] = refused
    .sort((a, b) => a.line - b.line)
    .flatMap((r) => r.problems.map((d) => ({ line: r.line, name: r.name, field: d.field, message: d.message })));
  put(
    errorsSlot,
    errors.length === 0
      ? null
      : [
          table(
            'Rows not imported',
            [
              { title: 'Line', class: 'num', cell: (e: RowError) => String(e.line) },
              { title: 'Name', cell: (e) => e.name || '—' },
              { title: 'Field', cell: (e) => h('code', null, e.field || '—') },
              { title: 'Problem', cell: (e) => e.message },
            ],
            errors,
          ),
          errorReportLink(refused),
        ],
  );
}

/** The rows not imported as CSV, with the columns of the CLI's error report. */
function errorReportLink(rows: ImportedRow[]): HTMLElement {
  const csv = csvRow(IMPORT_ERROR_COLUMNS) + rows.map(importErrorRows).join('');
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
  return h('p', null, h('a', { href: url, download: 'import-errors.csv' }, 'Download these errors as CSV'));
}
