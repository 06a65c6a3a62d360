import { HISTORY_MAX_SPAN_DAYS, RAW_PAGE_MAX } from '@pricehound/client';
import { ApiError, ph, take } from '../api';
import {
  type ChartInput,
  type Marker,
  type PickedPoint,
  type PricePoint,
  type PriceSeries,
  priceChart,
  type PriceChart,
} from '../charts/price-chart';
import { append, type Child, extLink, h, put } from '../dom';
import { count, money, number, percent, relative, stock, when } from '../format';
import { competitorMap, competitorName, forgetProduct, rememberProduct } from '../names';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type {
  AlertEvent,
  BucketHistory,
  Competitor,
  Interval,
  Listing,
  Observation,
  PriceChange,
  Product,
  RawHistory,
  Trends,
} from '../types';
import {
  confirmDialog,
  describeError,
  errorBox,
  loading,
  POSITION_WORDS,
  positionClass,
  section,
  table,
  toast,
  withBusy,
} from '../ui';
import { addListingForm, candidatesTable, evidenceView, statusBadge } from './listings';
import { openProductForm } from './product-form';

const DAY = 86_400;
export const RANGES: Record<string, { label: string; days: number }> = {
  '7d': { label: '7 days', days: 7 },
  '30d': { label: '30 days', days: 30 },
  '90d': { label: '90 days', days: 90 },
  '1y': { label: '1 year', days: 365 },
};
/** The API's longest span per interval (docs/prices/HISTORY.md, "Span limits"), as the client knows it. */
const MAX_DAYS: Record<Interval, number> = HISTORY_MAX_SPAN_DAYS;
const INTERVALS: [Interval, string][] = [
  ['raw', 'Every observation'],
  ['hour', 'Hourly'],
  ['day', 'Daily'],
  ['week', 'Weekly'],
];
/** Raw history is read RAW_PAGE_MAX (1000) observations a request; this many requests at most (a year of hourly prices of 11 series is ~100). */
const RAW_MAX_PAGES = 150;
/** The first window of raw history (the newest), and how many observations later windows aim at. */
const RAW_FIRST_WINDOW = DAY;
const RAW_PAGE_TARGET = 950;

/**
 * The interval a range gets unless one is chosen: every observation, read newest first and drawn
 * as it arrives (the chart answers after the first request), up to the API's raw span of 366 days.
 * Bucketed history of a long period is one request that answers only when all of it is computed
 * (seconds for a year of hourly prices on the embedded database), so it is offered, not the default.
 */
export function autoInterval(days: number): Interval {
  return days <= MAX_DAYS.raw ? 'raw' : 'day';
}

export async function productPage(ctx: PageContext): Promise<void> {
  const id = ctx.params.id!;
  const head = pageHeader(ctx, 'Product');
  const rangeKey = RANGES[ctx.query.get('range') ?? ''] ? ctx.query.get('range')! : '30d';
  const days = RANGES[rangeKey]!.days;
  const asked = ctx.query.get('interval') as Interval | null;
  const interval: Interval =
    asked && MAX_DAYS[asked] !== undefined && MAX_DAYS[asked] >= days ? asked : autoInterval(days);
  const to = Math.ceil(Date.now() / 1000 / 60) * 60;
  const from = to - days * DAY;
  // The chart's first request goes out with the product's and the competitors' (names), not
  // after them: the first frame waits for one round trip instead of three.
  const first = firstHistoryRequest(ctx, id, interval, from, to);
  first.catch(() => undefined); // a missing product answers below
  const compsRequest = competitorMap().catch(() => new Map<string, Competitor>());
  let product: Product;
  try {
    product = await ph.GET('/api/v1/products/{id}', { params: { path: { id } }, signal: ctx.signal });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      head.textContent = 'Product not found';
      ctx.main.append(
        h('p', null, 'It may have been deleted. ', h('a', { href: '#/products' }, 'Back to the products')),
      );
      return;
    }
    throw err;
  }
  rememberProduct(product);
  document.title = `${product.name} · pricehound`;
  head.textContent = product.name;

  const editBtn = h('button', { type: 'button', class: 'secondary', onclick: () => void edit() }, 'Edit');
  const delBtn = h('button', { type: 'button', class: 'danger', onclick: () => void remove() }, 'Delete');
  // "New alert" opens the rule form with this product already chosen.
  const newAlert = h(
    'a',
    { class: 'button secondary', href: href('/alerts', { product_id: product.id }), 'data-testid': 'new-alert' },
    'New alert',
  );
  head.parentElement!.append(h('div', { class: 'toolbar' }, newAlert, editBtn, delBtn));
  const edit = async () => {
    const saved = await openProductForm(product);
    if (saved) go(`/products/${saved.id}`, Object.fromEntries(ctx.query));
  };
  const remove = async () => {
    if (
      !(await confirmDialog(
        `Delete “${product.name}”? Its listings, alerts and price history go with it.`,
        'Delete product',
      ))
    )
      return;
    await withBusy(delBtn, null, async () => {
      await ph.DELETE('/api/v1/products/{id}', { params: { path: { id: product.id } } });
      forgetProduct(product.id);
      toast(`Deleted ${product.name}.`);
      go('/products');
    });
  };

  append(ctx.main, [
    h(
      'dl',
      { class: 'meta' },
      meta('SKU', product.sku),
      meta('Brand', product.brand),
      meta('Category', product.category),
      meta('Base price', money(product.base_price, product.currency)),
      meta('Our page', product.url ? extLink(product.url) : null),
      meta('Listings', count(product.monitoring.listing_count)),
      meta('Last checked', relative(product.monitoring.last_checked_at)),
    ),
    product.description ? h('p', { class: 'description' }, product.description) : null,
  ]);

  const positionSlot = h('div', { 'data-testid': 'position' }, positionSummary(product));
  ctx.main.append(section('Position now', positionSlot));

  // ---- the chart ----
  const status = h('p', { class: 'muted', role: 'status', 'data-testid': 'history-status' }, 'Loading price history…');
  const chartSlot = h('div', { class: 'chart-slot' });
  const evidence = h('div', { class: 'evidence', 'aria-live': 'polite', 'data-testid': 'evidence' });
  const markersSlot = h('div');
  const controls = historyControls(ctx, rangeKey, interval, days);
  const zoomReset = h(
    'button',
    { type: 'button', class: 'secondary small', onclick: () => chart?.resetZoom() },
    'Reset zoom',
  );
  ctx.main.append(
    section(
      'Price history',
      controls,
      h('div', { class: 'chart-head' }, status, zoomReset),
      chartSlot,
      h(
        'p',
        { class: 'hint' },
        'Drag across the chart to zoom, double-click or “Reset zoom” to go back. Hover a point to see its observation; click it (or focus the chart and use the arrow keys and Enter) for the evidence of its check. ',
        'Coloured bars along the bottom: time out of stock. Amber flags: alert firings. Dashed grey: the lowest competitor price in effect (in stock, same currency); dotted: a last price holding until now.',
      ),
      evidence,
      markersSlot,
    ),
  );

  let chart: PriceChart | null = null;
  ctx.onLeave(() => chart?.destroy());
  const comps = await compsRequest;
  const state: ChartInput = {
    series: [],
    productCurrency: product.currency,
    outOfStock: new Map(),
    markers: [],
    range: [from, to],
  };
  let stockFromChanges: Map<string, [number, number][]> | null = null;

  const draw = () => {
    if (ctx.signal.aborted) return;
    const input: ChartInput = {
      ...state,
      outOfStock: interval === 'raw' ? rawStock(state.series, to) : (stockFromChanges ?? new Map()),
    };
    if (!chart) {
      if (input.series.length === 0) return;
      chart = priceChart(input, (p) => void showEvidence(ctx, product, p, evidence));
      put(chartSlot, chart.el);
    } else chart.update(input);
  };

  const onPoints = (series: PriceSeries[], done: boolean, loaded: number) => {
    state.series = series;
    draw();
    put(
      status,
      series.length === 0 && done
        ? 'No prices in this period.'
        : `${count(loaded)} ${interval === 'raw' ? 'observations' : 'buckets'} of ${series.length} series${done ? '' : ' so far, loading more…'} (${RANGES[rangeKey]!.label}, ${INTERVALS.find(([k]) => k === interval)![1].toLowerCase()})`,
    );
    if (series.length === 0 && done)
      put(
        chartSlot,
        h(
          'p',
          { class: 'muted empty' },
          "No price was observed in this period. Prices come from checks of the product's listings and from POST /prices.",
        ),
      );
  };

  let firstDrawn!: () => void;
  const drawnOnce = new Promise<void>((resolve) => (firstDrawn = resolve));
  const history = loadHistory(ctx, product, comps, interval, from, to, first, onPoints, firstDrawn)
    .catch((err: unknown) => {
      if (!ctx.signal.aborted) put(status, errorBox(err));
    })
    .finally(firstDrawn);
  // The rest waits for the chart's first frame: with the embedded database requests take turns,
  // and the chart is what the page is for.
  await drawnOnce;

  const listingsSlot = h('div', null, loading('Loading listings…'));
  const trendsButton = h('button', { type: 'button', class: 'secondary' }, 'Show trends and statistics');
  const trendsSlot = h(
    'div',
    { 'data-testid': 'trends' },
    h(
      'p',
      { class: 'muted' },
      "Every series' changes over 24 hours, 7 and 30 days, and its statistics over the last year. ",
      trendsButton,
    ),
  );
  const trendsSection = section('Trends and statistics', trendsSlot);
  ctx.main.append(section('Listings', listingsSlot), trendsSection);

  const updateStock = (trends: Trends | null) => {
    if (interval === 'raw') return; // raw observations carry their stock
    void stockTimeline(ctx, product.id, from, to, trends).then(
      (s) => {
        stockFromChanges = s;
        draw();
      },
      () => undefined, // stock lanes are extra: the chart stands without them
    );
  };
  updateStock(null);
  void loadAlertMarkers(ctx, product.id, from, comps).then((m) => {
    if (!m) return;
    state.markers = m.markers;
    put(markersSlot, m.list);
    draw();
  });
  void renderProductListings(ctx, product, comps, listingsSlot);

  // Trends read the product's whole history (every observation of every series), which on a long
  // hourly history takes seconds, and with the embedded database every other request waits for
  // it. So they load when their section is about to be seen (or on the button), after the chart.
  let trendsAsked = false;
  const showTrends = () => {
    if (trendsAsked) return;
    trendsAsked = true;
    observer.disconnect();
    put(trendsSlot, loading('Loading trends…'));
    void history
      .then(() => loadTrends(ctx, product, trendsSlot, positionSlot))
      .then((trends) => trends && updateStock(trends));
  };
  trendsButton.addEventListener('click', showTrends);
  const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && showTrends(), {
    rootMargin: '100px',
  });
  // Observed once the chart is on the page: before, the section would be in view for a moment.
  requestAnimationFrame(() => !ctx.signal.aborted && !trendsAsked && observer.observe(trendsSection));
  ctx.onLeave(() => observer.disconnect());
  await history;
}

const meta = (label: string, value: Child) =>
  value === null || value === undefined || value === ''
    ? null
    : h('div', null, h('dt', null, label), h('dd', null, value));

function positionSummary(p: Product): HTMLElement {
  const pos = p.monitoring.position;
  const kind = positionClass(pos.rank, pos.competitors_compared);
  return h(
    'div',
    { class: `position-card ${kind}` },
    h(
      'p',
      { class: 'big' },
      kind === 'none' ? 'Not compared yet' : `#${pos.rank} of ${pos.competitors_compared + 1}: ${POSITION_WORDS[kind]}`,
    ),
    h(
      'dl',
      { class: 'stats' },
      h(
        'div',
        null,
        h('dt', null, 'Our price'),
        h('dd', null, money(pos.own_price, p.currency), pos.own_price_source === 'base_price' ? ' (base price)' : ''),
      ),
      h('div', null, h('dt', null, 'Price index'), h('dd', null, number(pos.price_index))),
      h(
        'div',
        null,
        h('dt', null, 'Competitors compared'),
        h(
          'dd',
          null,
          count(pos.competitors_compared),
          pos.competitors_left_out ? ` (${pos.competitors_left_out} left out)` : '',
        ),
      ),
    ),
  );
}

function historyControls(ctx: PageContext, rangeKey: string, interval: Interval, days: number): HTMLElement {
  const link = (range: string, iv: Interval | null) =>
    href(`/products/${ctx.params.id}`, { range, interval: iv ?? undefined });
  return h(
    'div',
    { class: 'history-controls' },
    h(
      'nav',
      { class: 'segmented', 'aria-label': 'Period' },
      Object.entries(RANGES).map(([k, r]) =>
        h(
          'a',
          {
            href: link(k, MAX_DAYS[interval] >= r.days ? interval : null),
            'aria-current': k === rangeKey ? 'true' : undefined,
          },
          r.label,
        ),
      ),
    ),
    h(
      'nav',
      { class: 'segmented', 'aria-label': 'Interval' },
      INTERVALS.map(([k, label]) =>
        MAX_DAYS[k] >= days
          ? h('a', { href: link(rangeKey, k), 'aria-current': k === interval ? 'true' : undefined }, label)
          : h('span', { class: 'disabled', title: `At most ${MAX_DAYS[k]} days at this interval` }, label),
      ),
    ),
  );
}

/** Series key: the seller, and the currency when a seller used several. */
const keyOf = (competitorId: string | null) => competitorId ?? 'own';

function labelOf(
  comps: Map<string, Competitor>,
  competitorId: string | null,
  currency: string,
  productCurrency: string,
): string {
  const name = competitorId === null ? 'Our price' : competitorName(comps, competitorId);
  return currency === productCurrency ? name : `${name} (${currency})`;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

/** The history's first request: all the buckets, or the first window of raw observations (loadHistory). */
function firstHistoryRequest(
  ctx: PageContext,
  id: string,
  interval: Interval,
  from: number,
  to: number,
): Promise<BucketHistory | RawHistory> {
  const start = interval === 'raw' ? Math.max(from, to - RAW_FIRST_WINDOW) : from;
  const query = { interval, from: iso(start), to: iso(to), ...(interval === 'raw' ? { limit: RAW_PAGE_MAX } : {}) };
  return ph.GET('/api/v1/products/{id}/prices', { params: { path: { id }, query }, signal: ctx.signal });
}

/** Raw history pages of [start, end), from `cursor` on: the client's pagination. */
const rawPages = (ctx: PageContext, id: string, start: number, end: number, cursor?: string) =>
  ph.pages('/api/v1/products/{id}/prices', {
    params: {
      path: { id },
      query: { interval: 'raw', from: iso(start), to: iso(end), limit: RAW_PAGE_MAX, ...(cursor ? { cursor } : {}) },
    },
    signal: ctx.signal,
  });

/** Reads the history: buckets in one request, or raw observations page by page, reporting as it goes. */
async function loadHistory(
  ctx: PageContext,
  product: Product,
  comps: Map<string, Competitor>,
  interval: Interval,
  from: number,
  to: number,
  first: Promise<BucketHistory | RawHistory>,
  onPoints: (series: PriceSeries[], done: boolean, loaded: number) => void,
  onFirst: () => void,
): Promise<void> {
  if (interval !== 'raw') {
    const res = await first;
    if (res.interval === 'raw') throw new Error('asked for buckets, got observations');
    let loaded = 0;
    const series: PriceSeries[] = res.series.map((s) => {
      const points: PricePoint[] = [];
      for (const b of s.buckets) {
        if (b.close === null) continue;
        points.push({ t: Date.parse(b.start) / 1000, v: b.close, inStock: null, bucket: b });
      }
      loaded += points.length;
      return {
        key: `${keyOf(s.competitor_id)}|${s.currency}`,
        label: labelOf(comps, s.competitor_id, s.currency, product.currency),
        currency: s.currency,
        points,
      };
    });
    onPoints(sortSeries(series), true, loaded);
    return;
  }
  // Newest first, in windows sized to about one page each (the API pages forward in time within
  // a window), so the recent prices are on the chart after the first request and older ones
  // fill in to the left.
  const byKey = new Map<string, { series: PriceSeries; windows: PricePoint[][] }>();
  const current = () =>
    sortSeries(
      [...byKey.values()].map(({ series, windows }) => ({
        ...series,
        points: windows.length === 1 ? windows[0]! : windows.slice().reverse().flat(),
      })),
    );
  let loaded = 0;
  let pages = 0;
  let lastDraw = 0;
  let end = to;
  let span = RAW_FIRST_WINDOW;
  while (end > from && pages < RAW_MAX_PAGES) {
    const start = Math.max(from, end - span);
    const windowIndex = new Map<string, PricePoint[]>();
    let inWindow = 0;
    const add = (data: Observation[]) => {
      pages++;
      for (const o of data) {
        const key = `${keyOf(o.competitor_id)}|${o.currency}`;
        let entry = byKey.get(key);
        if (!entry) {
          entry = {
            series: {
              key,
              label: labelOf(comps, o.competitor_id, o.currency, product.currency),
              currency: o.currency,
              points: [],
            },
            windows: [],
          };
          byKey.set(key, entry);
        }
        let w = windowIndex.get(key);
        if (!w) {
          w = [];
          windowIndex.set(key, w);
          entry.windows.push(w);
        }
        w.push({ t: Date.parse(o.observed_at) / 1000, v: o.price, inStock: o.in_stock, obs: o });
      }
      inWindow += data.length;
      // Redraw as data arrive, at most every 300 ms (the chart is usable from the first request on).
      if (pages === 1 || performance.now() - lastDraw > 300) {
        onPoints(current(), false, loaded + inWindow);
        lastDraw = performance.now();
        if (pages === 1) onFirst();
      }
    };
    // The newest window's first page was asked for with the product (firstHistoryRequest).
    let more = true;
    let cursor: string | undefined;
    if (pages === 0) {
      const res = await first;
      if (res.interval !== 'raw') throw new Error('asked for observations, got buckets');
      add(res.data);
      cursor = res.pagination.next_cursor ?? undefined;
      more = cursor !== undefined;
    }
    if (more) {
      for await (const page of rawPages(ctx, product.id, start, end, cursor)) {
        add(page);
        if (pages >= RAW_MAX_PAGES) break;
      }
    }
    loaded += inWindow;
    // The next window holds about one page at the density seen so far.
    const density = inWindow / (end - start);
    span = density > 0 ? Math.min(Math.max(RAW_PAGE_TARGET / density, 3600), 366 * DAY) : span * 4;
    end = start;
  }
  onPoints(current(), true, loaded);
}

/** Ours first, then competitors by name. */
const sortSeries = (s: PriceSeries[]) =>
  s.sort((a, b) => (a.key.startsWith('own|') ? -1 : b.key.startsWith('own|') ? 1 : a.label.localeCompare(b.label)));

/** Out-of-stock spans from raw observations: from an out-of-stock observation to the series' next one. */
function rawStock(series: PriceSeries[], end: number): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  for (const s of series) {
    const spans: [number, number][] = [];
    let start: number | null = null;
    for (const p of s.points) {
      if (p.inStock === false && start === null) start = p.t;
      else if (p.inStock !== false && start !== null) {
        spans.push([start, p.t]);
        start = null;
      }
    }
    if (start !== null) spans.push([start, end]);
    if (spans.length) out.set(s.key, spans);
  }
  return out;
}

/**
 * Out-of-stock spans for bucketed history (buckets carry no stock): from the product's price
 * changes in the period (each says the stock before and after), and once trends are loaded, for
 * series without a change in it, their stock now.
 */
async function stockTimeline(
  ctx: PageContext,
  productId: string,
  from: number,
  to: number,
  trends: Trends | null,
): Promise<Map<string, [number, number][]>> {
  // The newest 500 changes (5 pages) at most.
  const changes: PriceChange[] = await take(
    ph.paginate('/api/v1/price-changes', {
      params: { query: { product_id: productId, since: new Date(from * 1000).toISOString() } },
      signal: ctx.signal,
    }),
    500,
  );
  changes.reverse(); // oldest first
  const bySeries = new Map<string, PriceChange[]>();
  for (const c of changes) {
    const k = `${keyOf(c.competitor_id)}|${c.new.currency}`;
    bySeries.set(k, [...(bySeries.get(k) ?? []), c]);
  }
  const out = new Map<string, [number, number][]>();
  for (const [k, list] of bySeries) {
    const spans: [number, number][] = [];
    let outSince: number | null = list[0]!.old.in_stock === false ? from : null;
    for (const c of list) {
      const t = Date.parse(c.new.observed_at) / 1000;
      if (c.new.in_stock === false && outSince === null) outSince = t;
      else if (c.new.in_stock !== false && outSince !== null) {
        spans.push([outSince, t]);
        outSince = null;
      }
    }
    if (outSince !== null) spans.push([outSince, to]);
    if (spans.length) out.set(k, spans);
  }
  if (trends) {
    const now = [
      { key: `own|${trends.own.currency}`, inStock: trends.own.in_stock },
      ...trends.competitors.map((c) => ({ key: `${c.competitor_id}|${c.currency}`, inStock: c.in_stock })),
    ];
    for (const s of now) if (!bySeries.has(s.key) && s.inStock === false) out.set(s.key, [[from, to]]);
  }
  return out;
}

async function loadAlertMarkers(
  ctx: PageContext,
  productId: string,
  from: number,
  comps: Map<string, Competitor>,
): Promise<{ markers: Marker[]; list: HTMLElement } | null> {
  let events: AlertEvent[];
  try {
    const page = await ph.GET('/api/v1/alert-events', {
      params: { query: { product_id: productId, created_after: new Date(from * 1000).toISOString(), limit: 100 } },
      signal: ctx.signal,
    });
    events = page.data;
  } catch (err) {
    if (ctx.signal.aborted) return null;
    return { markers: [], list: errorBox(err) };
  }
  const markers = events.map((e) => ({
    t: Date.parse(e.current?.observed_at ?? e.created_at) / 1000,
    label: e.message,
  }));
  const list = h(
    'div',
    { 'data-testid': 'alert-firings' },
    h('h3', null, `Alert firings in this period (${events.length})`),
    events.length === 0
      ? h('p', { class: 'muted' }, 'No alert fired for this product in this period.')
      : h(
          'ul',
          { class: 'events' },
          events.map((e) =>
            h(
              'li',
              null,
              h('time', { datetime: e.created_at }, when(e.created_at)),
              ' — ',
              e.message,
              e.competitor_id ? ` (${competitorName(comps, e.competitor_id)})` : '',
              e.test ? ' [test]' : '',
            ),
          ),
        ),
  );
  return { markers, list };
}

async function loadTrends(
  ctx: PageContext,
  product: Product,
  slot: HTMLElement,
  positionSlot: HTMLElement,
): Promise<Trends | null> {
  let t: Trends;
  try {
    t = await ph.GET('/api/v1/products/{id}/trends', { params: { path: { id: product.id } }, signal: ctx.signal });
  } catch (err) {
    if (!ctx.signal.aborted) put(slot, errorBox(err));
    return null;
  }
  const c = t.comparison;
  const kind = positionClass(c.rank, c.compared);
  put(
    positionSlot,
    h(
      'div',
      { class: `position-card ${kind}` },
      h(
        'p',
        { class: 'big' },
        kind === 'none' ? 'Not compared yet' : `#${c.rank} of ${c.compared + 1}: ${POSITION_WORDS[kind]}`,
      ),
      h(
        'dl',
        { class: 'stats' },
        stat(
          'Our price',
          money(t.own.price_in_product_currency ?? t.own.price, t.currency),
          t.own.source === 'base_price' ? ' (base price)' : '',
        ),
        stat('Price index', number(c.price_index), ' (100 = the average)'),
        stat(
          'Cheapest competitor',
          c.cheapest
            ? `${c.cheapest.competitor_name}: ${money(c.cheapest.price_in_product_currency, t.currency)}`
            : '—',
          c.cheapest ? ` since ${when(c.cheapest.since)}` : '',
        ),
        stat(
          'Lowest / average / highest',
          `${money(c.lowest, t.currency)} / ${money(c.average, t.currency)} / ${money(c.highest, t.currency)}`,
        ),
        stat(
          'Competitors',
          `${c.compared} compared`,
          c.left_out.out_of_stock || c.left_out.no_rate
            ? `, left out: ${c.left_out.out_of_stock} out of stock, ${c.left_out.no_rate} without exchange rate`
            : '',
        ),
        stat('Their stock', `${c.stock.in_stock} in stock, ${c.stock.out_of_stock} out, ${c.stock.unknown} unknown`),
      ),
    ),
  );
  type Row = {
    name: string;
    price: string;
    stock: string;
    since: string | null;
    changes: Trends['own']['changes'];
    stats: Trends['own']['stats'];
  };
  const rows: Row[] = [
    {
      name: 'Our price',
      price: money(t.own.price, t.own.currency),
      stock: stock(t.own.in_stock),
      since: t.own.price_since,
      changes: t.own.changes,
      stats: t.own.stats,
    },
    ...t.competitors.map((s) => ({
      name: s.competitor_name,
      price: money(s.price, s.currency),
      stock: `${stock(s.in_stock)}${s.compared === 'no_rate' ? ', no exchange rate' : ''}`,
      since: s.price_since,
      changes: s.changes,
      stats: s.stats,
    })),
  ];
  const ch = (r: Row, p: '24h' | '7d' | '30d') => {
    const v = r.changes?.[p].percent;
    return h(
      'span',
      { class: v === null || v === undefined || v === 0 ? '' : v < 0 ? 'down' : 'up' },
      percent(v ?? null),
    );
  };
  const range = (r: Row, k: '30d' | '90d' | '365d') => {
    const s = r.stats?.ranges[k];
    if (!s) return '—';
    const cur = r.stats!.currency;
    return h(
      'span',
      null,
      `avg ${money(s.average, cur)}`,
      h('br'),
      `${money(s.lowest?.price, cur)} – ${money(s.highest?.price, cur)}`,
      s.out_of_stock_share ? h('br') : null,
      s.out_of_stock_share ? `${percent(s.out_of_stock_share * 100, false)} out of stock` : null,
    );
  };
  put(
    slot,
    table(
      `Every series as of ${when(t.as_of)}`,
      [
        { title: 'Seller', cell: (r: Row) => r.name },
        { title: 'Price now', class: 'num', cell: (r) => r.price },
        { title: 'Stock', cell: (r) => r.stock },
        { title: 'Since', cell: (r) => (r.since ? when(r.since) : '—') },
        { title: '24 h', class: 'num', cell: (r) => ch(r, '24h') },
        { title: '7 days', class: 'num', cell: (r) => ch(r, '7d') },
        { title: '30 days', class: 'num', cell: (r) => ch(r, '30d') },
        { title: 'Last 30 days', cell: (r) => range(r, '30d') },
        { title: 'Last 90 days', cell: (r) => range(r, '90d') },
        { title: 'Last year', cell: (r) => range(r, '365d') },
        {
          title: 'Lowest / highest ever',
          cell: (r) =>
            r.stats
              ? `${money(r.stats.lowest_ever?.price, r.stats.currency)} / ${money(r.stats.highest_ever?.price, r.stats.currency)}`
              : '—',
        },
      ],
      rows,
    ),
  );
  return t;
}

const stat = (label: string, value: string, extra: string = '') =>
  h('div', null, h('dt', null, label), h('dd', null, value, extra));

/**
 * The evidence of a point: the observation, and for a price a check found, that check from the
 * listing's log (where on the page it was read, the raw text, every candidate and why one won).
 * The log keeps a listing's last 50 checks; older observations have no evidence left.
 */
async function showEvidence(ctx: PageContext, product: Product, picked: PickedPoint, slot: HTMLElement): Promise<void> {
  put(slot, loading('Loading the evidence…'));
  try {
    let obs: Observation | undefined = picked.point.obs;
    let note: string | null = null;
    if (!obs && picked.point.bucket) {
      const b = picked.point.bucket;
      const competitor = picked.series.key.split('|')[0]!;
      const res = await ph.GET('/api/v1/products/{id}/prices', {
        params: {
          path: { id: product.id },
          query: { interval: 'raw', from: b.start, to: b.end, competitor_id: [competitor], limit: RAW_PAGE_MAX },
        },
        signal: ctx.signal,
      });
      const inCurrency = res.interval === 'raw' ? res.data.filter((o) => o.currency === picked.series.currency) : [];
      obs = inCurrency[inCurrency.length - 1];
      note = `The last of the ${b.count} observation${b.count === 1 ? '' : 's'} from ${when(b.start)} to ${when(b.end)}.`;
    }
    if (!obs) {
      put(slot, h('p', { class: 'muted' }, 'No observation behind this point.'));
      return;
    }
    const head = h(
      'div',
      null,
      h('h3', { tabindex: -1 }, `Evidence: ${picked.series.label}, ${money(obs.price, obs.currency)}`),
      note ? h('p', { class: 'muted' }, note) : null,
      h(
        'dl',
        { class: 'stats' },
        stat('Observed', when(obs.observed_at, true)),
        stat('Stock', stock(obs.in_stock)),
        stat('Source', obs.source === 'scrape' ? 'a check of a listing' : 'sent through the API (POST /prices)'),
        obs.samples > 1 ? stat('Rolled up', `${obs.samples} observations`) : null,
      ),
    );
    if (obs.source !== 'scrape' || !obs.listing_id) {
      put(slot, head, h('p', { class: 'muted' }, 'Prices sent through the API come with no check to show.'));
      return;
    }
    // A price a check recorded, or one a person accepted after its check held it.
    const checks = await ph
      .GET('/api/v1/listings/{id}/checks', {
        params: { path: { id: obs.listing_id }, query: { limit: 100 } },
        signal: ctx.signal,
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      });
    const t = Date.parse(obs.observed_at);
    const check = checks?.data.find((c) => {
      const start = Date.parse(c.started_at);
      const recorded = c.outcome === 'recorded' || c.held?.state === 'accepted';
      return recorded && start <= t && t <= start + c.duration_ms + 2000 && c.price === obs.price;
    });
    if (!check) {
      put(
        slot,
        head,
        h(
          'p',
          { class: 'muted' },
          checks
            ? "This check is no longer in the listing's log (it keeps the last 50 checks)."
            : 'The listing has been deleted; its check log went with it.',
        ),
      );
      return;
    }
    const chosen = check.candidates.find((c) => c.chosen);
    put(
      slot,
      head,
      h(
        'dl',
        { class: 'stats' },
        stat('Checked', `${when(check.started_at, true)} (${check.duration_ms} ms)`),
        stat('HTTP status', check.http_status === null ? '—' : String(check.http_status)),
        h('div', null, h('dt', null, 'Page'), h('dd', null, extLink(check.final_url))),
        stat('Found in', check.source ?? '—'),
      ),
      check.held
        ? h(
            'p',
            { class: 'notice warn' },
            check.outcome === 'held'
              ? 'Held by its check, then accepted by hand: '
              : 'Held first, then read again by the next check and recorded: ',
            check.held.reason,
          )
        : null,
      chosen
        ? h(
            'div',
            { class: 'chosen' },
            h('p', null, 'Where on the page: ', h('code', { 'data-testid': 'evidence-detail' }, chosen.detail ?? '—')),
            h('p', null, 'Raw text: ', h('code', { 'data-testid': 'evidence-raw' }, chosen.raw ?? '—')),
            evidenceView(check.listing_id, chosen),
          )
        : null,
      candidatesTable(check.candidates),
    );
    slot.querySelector<HTMLElement>('h3')?.focus();
  } catch (err) {
    if (!ctx.signal.aborted)
      put(slot, h('p', { class: 'notice error' }, `Could not load the evidence: ${describeError(err)}`));
  }
}

async function renderProductListings(
  ctx: PageContext,
  product: Product,
  comps: Map<string, Competitor>,
  slot: HTMLElement,
): Promise<void> {
  try {
    const page = await ph.GET('/api/v1/products/{id}/listings', {
      params: { path: { id: product.id }, query: { limit: 100 } },
      signal: ctx.signal,
    });
    put(
      slot,
      table(
        "Pages where this product's price is checked",
        [
          { title: 'Where', cell: (l: Listing) => competitorName(comps, l.competitor_id) },
          { title: 'Page', cell: (l) => extLink(l.url) },
          { title: 'State', cell: (l) => statusBadge(l) },
          { title: 'Last price', class: 'num', cell: (l) => money(l.last_price, l.last_currency) },
          { title: 'Last check', cell: (l) => relative(l.last_checked_at) },
          { title: 'Next check', cell: (l) => (l.enabled ? relative(l.next_check_at) : 'disabled') },
        ],
        page.data,
        'No listings yet: add the pages to check below.',
      ),
      h(
        'p',
        null,
        h(
          'a',
          { href: href('/listings', { product_id: product.id }) },
          'Manage these listings (check now, check log, dry run)',
        ),
      ),
      // For this product: nothing to paste.
      h('h3', null, 'Add a listing of this product'),
      addListingForm(
        comps,
        { id: product.id, name: product.name },
        () => void renderProductListings(ctx, product, comps, slot),
      ),
    );
  } catch (err) {
    if (!ctx.signal.aborted) put(slot, errorBox(err));
  }
}
