import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h, put } from '../dom';
import { money, stock, when } from '../format';
import type { Bucket, Observation } from '../types';
import { observeWidth } from './size';

/**
 * The product's price history with uPlot: one stepped line per series (ours, each competitor),
 * the lowest competitor price as a dashed line, out-of-stock time as bars along the bottom, alert
 * firings as markers. uPlot draws ~100 000 points in tens of milliseconds on one canvas, so the
 * whole year of hourly prices stays one chart (docs/DASHBOARD.md, docs/BENCHMARKS.md).
 */

export interface PricePoint {
  /** Unix seconds. */
  t: number;
  v: number;
  inStock: boolean | null;
  /** What the point stands for: an observation (raw) or a bucket. */
  obs?: Observation;
  bucket?: Bucket;
}

export interface PriceSeries {
  /** `<competitor id or own>|<currency>`. */
  key: string;
  label: string;
  currency: string;
  points: PricePoint[];
}

export interface Marker {
  t: number;
  label: string;
}

export interface ChartInput {
  series: PriceSeries[];
  productCurrency: string;
  /** Out-of-stock spans per series key, [start, end) in seconds. */
  outOfStock: Map<string, [number, number][]>;
  markers: Marker[];
  /** The x range asked for, seconds. */
  range: [number, number];
}

export interface PickedPoint {
  series: PriceSeries;
  point: PricePoint;
}

const OWN_COLOR = '#111827';
/** Competitors' hues, distinct and each with at least 3:1 contrast on white (WCAG non-text contrast). */
const PALETTE = [
  '#1d4ed8',
  '#b91c1c',
  '#047857',
  '#7c3aed',
  '#b45309',
  '#0e7490',
  '#be185d',
  '#4d7c0f',
  '#9333ea',
  '#c2410c',
  '#0369a1',
  '#a16207',
];
/** A reference line, not a seller: grey, dashed. */
const LOWEST_COLOR = '#4b5563';
const MARKER_COLOR = '#b45309';
const HEIGHT = 380;

/** Series keys are `<seller>|<currency>`, the seller `own` for our own shop. */
export const isOwn = (key: string) => key === 'own' || key.startsWith('own|');
/** Our price black; competitors through the palette in their order (ours is listed first). */
export const colorOf = (series: readonly PriceSeries[], i: number) => {
  const s = series[i]!;
  if (isOwn(s.key)) return OWN_COLOR;
  const ownBefore = series.slice(0, i).filter((x) => isOwn(x.key)).length;
  return PALETTE[(i - ownBefore) % PALETTE.length]!;
};

interface Aligned {
  data: uPlot.AlignedData;
  /** pts[s][i]: the point behind data[s + 1][i] (series s). */
  pts: (PricePoint | undefined)[][];
  points: number;
  /** Per uPlot series (1..n, the lowest line last): the index of its last value, or -1. */
  last: number[];
}

/** One x array for all series (uPlot's aligned data): the sorted union of their times, nulls elsewhere. */
export function align(input: ChartInput): Aligned {
  let total = 0;
  for (const s of input.series) total += s.points.length;
  const all = new Float64Array(total);
  let k = 0;
  for (const s of input.series) for (const p of s.points) all[k++] = p.t;
  all.sort();
  const xs: number[] = [];
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) xs.push(all[i]!);
  const n = xs.length;
  const ys: (number | null)[][] = [];
  const pts: (PricePoint | undefined)[][] = [];
  for (const s of input.series) {
    const y: (number | null)[] = new Array(n).fill(null);
    const p: (PricePoint | undefined)[] = new Array(n);
    let j = 0;
    for (const pt of s.points) {
      while (xs[j]! < pt.t) j++;
      y[j] = pt.v;
      p[j] = pt;
    }
    ys.push(y);
    pts.push(p);
  }
  // The lowest competitor price in effect at each x: each competitor's latest price so far, when
  // it is in the product's currency (never mixed) and not out of stock.
  const lowest: (number | null)[] = new Array(n).fill(null);
  const comps = input.series
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => !isOwn(s.key) && s.currency === input.productCurrency);
  const last: (number | null)[] = comps.map(() => null);
  const spans = comps.map(({ s }) => input.outOfStock.get(s.key) ?? []);
  const spanAt = comps.map(() => 0);
  for (let x = 0; x < n; x++) {
    let min: number | null = null;
    for (let c = 0; c < comps.length; c++) {
      const v = ys[comps[c]!.i]![x];
      if (v !== null && v !== undefined) last[c] = v;
      const lv = last[c];
      if (lv === null || lv === undefined) continue;
      const sp = spans[c]!;
      while (spanAt[c]! < sp.length && sp[spanAt[c]!]![1] <= xs[x]!) spanAt[c]!++;
      const cur = sp[spanAt[c]!];
      if (cur && cur[0] <= xs[x]! && xs[x]! < cur[1]) continue;
      if (min === null || lv < min) min = lv;
    }
    lowest[x] = min;
  }
  const lastOf = (a: (number | null)[]) => {
    for (let i = a.length - 1; i >= 0; i--) if (a[i] !== null && a[i] !== undefined) return i;
    return -1;
  };
  return {
    data: [xs, ...ys, lowest] as uPlot.AlignedData,
    pts,
    points: total,
    last: [-1, ...ys.map(lastOf), lastOf(lowest)],
  };
}

/** The nearest index with a value in series `s`, searching both ways from `idx`. */
function nearestWithValue(data: uPlot.AlignedData, s: number, idx: number): number | null {
  const ys = data[s] as (number | null)[];
  const xs = data[0] as number[];
  if (ys[idx] !== null && ys[idx] !== undefined) return idx;
  let l = idx - 1;
  let r = idx + 1;
  while (l >= 0 || r < ys.length) {
    const lv = l >= 0 && ys[l] !== null && ys[l] !== undefined;
    const rv = r < ys.length && ys[r] !== null && ys[r] !== undefined;
    if (lv && rv) return xs[idx]! - xs[l]! <= xs[r]! - xs[idx]! ? l : r;
    if (lv) return l;
    if (rv) return r;
    l--;
    r++;
  }
  return null;
}

const padded = ([a, b]: [number, number]): [number, number] => [a, b + (b - a) * 0.01];

export interface PriceChart {
  el: HTMLElement;
  uplot: uPlot;
  update(input: ChartInput): void;
  resetZoom(): void;
  destroy(): void;
}

export function priceChart(input: ChartInput, onPick: (p: PickedPoint) => void): PriceChart {
  let current = input;
  let aligned = align(input);
  const plot = h('div', {
    class: 'chart price-chart',
    'data-chart': 'price',
    tabindex: 0,
    role: 'application',
    'aria-roledescription': 'price chart',
  });
  const tip = h('div', { class: 'chart-tip', role: 'status', 'aria-live': 'polite' });
  const stepped = uPlot.paths.stepped!({ align: 1 });

  const seriesOpts = (): uPlot.Series[] => [
    {},
    ...current.series.map((s, i) => ({
      label: s.label,
      stroke: colorOf(current.series, i),
      width: isOwn(s.key) ? 2.5 : 1.5,
      paths: stepped,
      spanGaps: true,
      // uPlot shows the points themselves only where they are few enough to tell apart.
      value: (_u: uPlot, v: number | null) => (v === null ? '—' : money(v, s.currency)),
    })),
    {
      label: 'Lowest competitor',
      stroke: LOWEST_COLOR,
      width: 2,
      dash: [6, 4],
      paths: stepped,
      spanGaps: true,
      points: { show: false },
      value: (_u: uPlot, v: number | null) => (v === null ? '—' : money(v, current.productCurrency)),
    },
  ];

  let picked: { s: number; idx: number } | null = null;
  const describe = (s: number, idx: number): string[] => {
    const series = current.series[s - 1];
    const pt = aligned.pts[s - 1]?.[idx];
    if (!series || !pt) return [];
    const lines = [series.label, money(pt.v, series.currency)];
    if (pt.obs) {
      lines.push(`observed ${when(pt.obs.observed_at, true)}`, stock(pt.obs.in_stock));
      lines.push(
        pt.obs.source === 'scrape'
          ? 'from a check: click or press Enter for the evidence'
          : 'sent through the API (POST /prices)',
      );
    } else if (pt.bucket) {
      const b = pt.bucket;
      lines.push(
        `${when(b.start)} – ${when(b.end)}`,
        `close ${money(b.close, series.currency)} · min ${money(b.min, series.currency)} · max ${money(b.max, series.currency)}`,
      );
      lines.push(`${b.count} observation${b.count === 1 ? '' : 's'}: click or press Enter for the last one`);
    }
    return lines;
  };
  const showTip = (u: uPlot, s: number, idx: number) => {
    const lines = describe(s, idx);
    if (lines.length === 0) {
      tip.classList.remove('show');
      return;
    }
    put(tip, ...lines.map((l, i) => h(i === 0 ? 'strong' : 'span', null, l)));
    const x = u.valToPos((u.data[0] as number[])[idx]!, 'x');
    const y = u.valToPos((u.data[s] as number[])[idx]!, 'y');
    tip.style.left = `${Math.min(Math.max(0, x + 12), u.over.clientWidth - 220)}px`;
    tip.style.top = `${Math.max(0, y - 10)}px`;
    tip.classList.add('show');
  };

  const onCursor = (u: uPlot) => {
    const left = u.cursor.left ?? -1;
    const top = u.cursor.top ?? -1;
    if (left < 0) {
      picked = null;
      tip.classList.remove('show');
      return;
    }
    let best: { s: number; idx: number; d: number } | null = null;
    for (let s = 1; s <= current.series.length; s++) {
      if (!u.series[s]?.show) continue;
      const idx = u.cursor.idxs?.[s];
      if (idx === null || idx === undefined) continue;
      const v = (u.data[s] as (number | null)[])[idx];
      if (v === null || v === undefined) continue;
      const d = Math.hypot(u.valToPos((u.data[0] as number[])[idx]!, 'x') - left, u.valToPos(v, 'y') - top);
      if (!best || d < best.d) best = { s, idx, d };
    }
    picked = best && best.d <= 40 ? { s: best.s, idx: best.idx } : null;
    if (picked) showTip(u, picked.s, picked.idx);
    else tip.classList.remove('show');
    // When the chart last answered the pointer (the performance test's "interactive").
    plot.dataset.cursorAt = String(performance.now());
  };

  let drawStart = 0;
  const drawExtras = (u: uPlot) => {
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const px = uPlot.pxRatio;
    ctx.save();
    // A price holds until the next observation: the last one of each series is drawn on (dotted)
    // to the end of the period.
    const endX = Math.min(left + width, u.valToPos(current.range[1], 'x', true));
    ctx.lineWidth = px;
    ctx.setLineDash([2 * px, 3 * px]);
    for (let s = 1; s < u.series.length; s++) {
      const i = aligned.last[s]!;
      if (i < 0 || !u.series[s]?.show) continue;
      const x = u.valToPos((u.data[0] as number[])[i]!, 'x', true);
      const y = u.valToPos((u.data[s] as number[])[i]!, 'y', true);
      if (x >= endX || x < left) continue;
      ctx.strokeStyle = s <= current.series.length ? colorOf(current.series, s - 1) : LOWEST_COLOR;
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(endX, y);
      ctx.stroke();
    }
    ctx.setLineDash([]);
    // Out of stock: a lane per series along the bottom, in its colour.
    const lane = 4 * px;
    current.series.forEach((s, i) => {
      const spans = current.outOfStock.get(s.key);
      if (!spans?.length || !u.series[i + 1]?.show) return;
      ctx.fillStyle = colorOf(current.series, i);
      ctx.globalAlpha = 0.7;
      const y = top + height - (i + 1) * (lane + px);
      for (const [a, b] of spans) {
        const x0 = Math.max(left, u.valToPos(a, 'x', true));
        const x1 = Math.min(left + width, u.valToPos(b, 'x', true));
        if (x1 > x0) ctx.fillRect(x0, y, Math.max(px, x1 - x0), lane);
      }
    });
    ctx.globalAlpha = 1;
    // Alert firings: a dashed line and a flag at the top.
    ctx.strokeStyle = MARKER_COLOR;
    ctx.fillStyle = MARKER_COLOR;
    ctx.lineWidth = px;
    ctx.setLineDash([3 * px, 3 * px]);
    for (const m of current.markers) {
      const x = u.valToPos(m.t, 'x', true);
      if (x < left || x > left + width) continue;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(x - 5 * px, top);
      ctx.lineTo(x + 5 * px, top);
      ctx.lineTo(x, top + 8 * px);
      ctx.closePath();
      ctx.fill();
    }
    ctx.restore();
    const now = performance.now();
    plot.dataset.drawn = String(now);
    if (plot.dataset.firstDrawn === undefined) {
      plot.dataset.firstDrawn = plot.dataset.drawn;
      plot.dataset.firstPoints = String(aligned.points);
    }
    // How long uPlot took to draw this frame (all series, every point), for docs/BENCHMARKS.md.
    plot.dataset.drawMs = (now - drawStart).toFixed(1);
  };

  const make = (width: number) =>
    new uPlot(
      {
        width,
        height: HEIGHT,
        // x: the range asked for (plus 1 % on the right, so the newest point is not on the edge),
        // also while data is still arriving or sparse; zooming sets it explicitly.
        scales: { x: { time: true, range: () => padded(current.range) }, y: { auto: true } },
        series: seriesOpts(),
        axes: [{}, { size: 80, values: (_u, vals) => vals.map((v) => money(v, current.productCurrency)) }],
        cursor: {
          // A press that moves less than 5 px is a click, not a zoom.
          drag: { x: true, y: false, setScale: true, dist: 5 },
          focus: { prox: 30 },
          dataIdx: (u, s, idx) => nearestWithValue(u.data, s, idx) ?? idx,
        },
        focus: { alpha: 0.35 },
        legend: { live: true },
        hooks: { drawClear: [() => (drawStart = performance.now())], draw: [drawExtras], setCursor: [onCursor] },
      },
      aligned.data,
      plot,
    );

  let u = make(Math.max(320, plot.clientWidth || 800));
  u.over.appendChild(tip);
  const annotate = () => {
    plot.dataset.points = String(aligned.points);
    plot.dataset.series = String(current.series.length);
    plot.setAttribute(
      'aria-label',
      `Price history: ${current.series.length} series, ${aligned.points} points. Arrow keys move between points, Up and Down between series, Enter shows a point's evidence.`,
    );
    Object.defineProperty(plot, 'uplot', { value: u, configurable: true });
  };
  annotate();

  const pick = () => {
    if (!picked) return;
    const series = current.series[picked.s - 1];
    const point = aligned.pts[picked.s - 1]?.[picked.idx];
    if (series && point) onPick({ series, point });
  };
  // A click picks the hovered point. Read from pointerdown/up rather than 'click': uPlot swallows
  // the click of any press that moved by a fraction of a pixel (it counts as a drag).
  const attachClick = () => {
    let down: { x: number; y: number } | null = null;
    u.over.addEventListener('pointerdown', (e) => (down = { x: e.clientX, y: e.clientY }));
    u.over.addEventListener('pointerup', (e) => {
      if (down && Math.hypot(e.clientX - down.x, e.clientY - down.y) < 5) pick();
      down = null;
    });
  };
  attachClick();

  // Keyboard: the focused chart moves a cursor along the points of one series.
  let kb: { s: number; idx: number } | null = null;
  plot.addEventListener('keydown', (e) => {
    const n = (u.data[0] as number[]).length;
    if (n === 0) return;
    kb ??= { s: 1, idx: n - 1 };
    const step = (dir: number) => {
      let i = kb!.idx + dir;
      const ys = u.data[kb!.s] as (number | null)[];
      while (i >= 0 && i < n && (ys[i] === null || ys[i] === undefined)) i += dir;
      if (i >= 0 && i < n) kb!.idx = i;
    };
    if (e.key === 'ArrowLeft') step(-1);
    else if (e.key === 'ArrowRight') step(1);
    else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      kb.s = ((kb.s - 1 + (e.key === 'ArrowUp' ? -1 : 1) + current.series.length) % current.series.length) + 1;
      kb.idx = nearestWithValue(u.data, kb.s, kb.idx) ?? kb.idx;
    } else if (e.key === 'Enter') {
      picked = kb;
      pick();
      return;
    } else return;
    e.preventDefault();
    const v = (u.data[kb.s] as (number | null)[])[kb.idx];
    if (v === null || v === undefined) return;
    u.setCursor({ left: u.valToPos((u.data[0] as number[])[kb.idx]!, 'x'), top: u.valToPos(v, 'y') });
    picked = kb;
    showTip(u, kb.s, kb.idx);
  });

  const stopResize = observeWidth(plot, (w) => u.setSize({ width: w, height: HEIGHT }));

  return {
    el: plot,
    get uplot() {
      return u;
    },
    update(next: ChartInput) {
      const sameSeries =
        next.series.length === current.series.length && next.series.every((s, i) => s.key === current.series[i]!.key);
      const prevRange = current.range;
      current = next;
      aligned = align(next);
      if (sameSeries) {
        // Keep a zoom the user chose; otherwise re-range (y follows the new data).
        const [a, b] = padded(prevRange);
        const zoomed = u.scales.x!.min !== a || u.scales.x!.max !== b;
        u.setData(aligned.data, !zoomed);
      } else {
        const w = u.width;
        u.destroy();
        u = make(w);
        u.over.appendChild(tip);
        attachClick();
      }
      annotate();
    },
    resetZoom() {
      const [min, max] = padded(current.range);
      u.setScale('x', { min, max });
    },
    destroy() {
      stopResize();
      u.destroy();
    },
  };
}
