import { NEAR_LIMIT, ph } from '../api';
import { usageChart } from '../charts/usage-chart';
import { type Child, extLink, h, put } from '../dom';
import { count, countdown, percent, relative } from '../format';
import { competitorMap, competitorName, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { href } from '../router';
import type { Listing, Usage } from '../types';
import { badge, errorBox, loading, section, table } from '../ui';

/** How far past its due time a listing counts as "not checked on time". */
const OVERDUE_GRACE_MS = 15 * 60_000;

export async function overviewPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Overview');
  const usageSlot = h('div', null, loading());
  const marketSlot = h('div', null, loading());
  const attentionSlot = h('div', null, loading());
  ctx.main.append(
    section('Usage this hour', usageSlot),
    section('Market movement', h('p', { class: 'muted' }, 'Price changes seen by checks and sent through the API. Each tile opens the list it counts.'), marketSlot),
    section('Needs attention', attentionSlot),
  );
  await Promise.all([renderUsage(ctx, usageSlot), renderMarket(ctx, marketSlot), renderAttention(ctx, attentionSlot)]);
}

async function renderUsage(ctx: PageContext, slot: HTMLElement): Promise<void> {
  let chart: { destroy: () => void } | null = null;
  let tick: () => void = () => undefined;
  const refresh = h('button', { type: 'button', class: 'secondary small', onclick: () => void load() }, 'Refresh usage');
  const load = async () => {
    let usage: Usage;
    try {
      usage = await ph.GET('/api/v1/usage', { params: { query: { hours: 48 } }, signal: ctx.signal });
    } catch (err) {
      if (!ctx.signal.aborted) put(slot, errorBox(err));
      return;
    }
    const resetIn = h('span', { 'data-testid': 'reset-countdown' });
    tick = () => put(resetIn, countdown(usage.reset - Date.now() / 1000));
    tick();
    const share = usage.limit > 0 ? usage.used / usage.limit : 0;
    const meter = h('meter', { min: 0, max: usage.limit, value: usage.used, low: usage.limit * NEAR_LIMIT, high: usage.limit * 0.95, optimum: 0, 'aria-label': 'Requests used this hour' });
    chart?.destroy();
    const c = usageChart(usage, 48);
    chart = c;
    put(
      slot,
      h(
        'dl',
        { class: 'stats' },
        stat('Plan', h('span', { 'data-testid': 'usage-plan' }, usage.plan)),
        stat('Used', h('span', { 'data-testid': 'usage-used' }, `${count(usage.used)} of ${count(usage.limit)}`)),
        stat('Remaining', h('span', { 'data-testid': 'usage-remaining' }, count(usage.remaining))),
        stat('Resets in', resetIn),
      ),
      meter,
      share >= NEAR_LIMIT
        ? h(
            'div',
            { class: 'notice warn', role: 'alert', 'data-testid': 'usage-warning' },
            `${Math.round(share * 100)} % of this hour's requests are used. Requests over ${count(usage.limit)} are refused (429) until the reset.`,
          )
        : null,
      h('h3', null, 'Requests per hour, last 48 hours'),
      c.el,
      h('p', { class: 'hint' }, 'Reading usage is not counted against the limit. ', refresh),
    );
  };
  await load();
  // The countdown every second; the numbers every 30 s (GET /usage is not counted against the limit).
  const countdownTimer = window.setInterval(() => tick(), 1000);
  const refreshTimer = window.setInterval(() => void load(), 30_000);
  ctx.onLeave(() => {
    window.clearInterval(countdownTimer);
    window.clearInterval(refreshTimer);
    chart?.destroy();
  });
}

const stat = (label: string, value: Child) => h('div', null, h('dt', null, label), h('dd', null, value));

async function renderMarket(ctx: PageContext, slot: HTMLElement): Promise<void> {
  const now = Date.now();
  const periods: [string, string][] = [
    ['Last 24 hours', new Date(now - 86_400_000).toISOString()],
    ['Last 7 days', new Date(now - 7 * 86_400_000).toISOString()],
  ];
  try {
    const summaries = await Promise.all(
      periods.map(([, since]) => ph.GET('/api/v1/price-changes/summary', { params: { query: { since } }, signal: ctx.signal })),
    );
    put(
      slot,
      periods.map(([title, since], i) => {
        const s = summaries[i]!;
        const link = (kind: string) => href('/changes', { since, kind });
        return h(
          'div',
          { class: 'tiles-group' },
          h('h3', null, title),
          h(
            'ul',
            { class: 'tiles', 'data-testid': `market-${i === 0 ? '24h' : '7d'}` },
            tile('Prices up', count(s.up), link('up'), 'up'),
            tile('Prices down', count(s.down), link('down'), 'down'),
            // Not a list of changes, so no link: the series observed in the period whose price stayed put.
            tile('Unchanged', count(s.series_unchanged), null, 'flat', `of ${count(s.series_observed)} series observed`),
            tile('Average change', percent(s.average_percent), link('moved'), s.average_percent !== null && s.average_percent < 0 ? 'down' : 'up', 'of the rises and drops'),
            tile('Back in stock', count(s.back_in_stock), link('back_in_stock'), 'up'),
            tile('Out of stock', count(s.out_of_stock), link('out_of_stock'), 'down'),
          ),
        );
      }),
    );
  } catch (err) {
    if (!ctx.signal.aborted) put(slot, errorBox(err));
  }
}

function tile(label: string, value: string, link: string | null, kind: string, note?: string): HTMLElement {
  const content = [h('span', { class: 'tile-value' }, value), h('span', { class: 'tile-label' }, label), note ? h('span', { class: 'tile-note' }, note) : null];
  return h('li', null, link ? h('a', { class: `tile ${kind}`, href: link }, content) : h('div', { class: `tile ${kind}` }, content));
}

async function renderAttention(ctx: PageContext, slot: HTMLElement): Promise<void> {
  try {
    const [failing, flagged, dueFirst, held] = await Promise.all([
      ph.GET('/api/v1/listings', { params: { query: { status: 'failing', limit: 20 } }, signal: ctx.signal }),
      ph.GET('/api/v1/listings', { params: { query: { status: 'flagged', limit: 20 } }, signal: ctx.signal }),
      ph.GET('/api/v1/listings', { params: { query: { enabled: true, sort: 'next_check_at', limit: 20 } }, signal: ctx.signal }),
      ph.GET('/api/v1/listings', { params: { query: { held: true, limit: 20 } }, signal: ctx.signal }),
    ]);
    const now = Date.now();
    const overdue = dueFirst.data.filter((l) => l.next_check_at && new Date(l.next_check_at).getTime() < now - OVERDUE_GRACE_MS);
    const rows = new Map<string, { l: Listing; why: string }>();
    for (const l of flagged.data) rows.set(l.id, { l, why: 'flagged: failing repeatedly' });
    for (const l of failing.data) rows.set(l.id, { l, why: 'last check failed' });
    for (const l of held.data) if (!rows.has(l.id)) rows.set(l.id, { l, why: 'price held: accept or reject it' });
    for (const l of overdue) if (!rows.has(l.id)) rows.set(l.id, { l, why: `not checked on time (due ${relative(l.next_check_at, now)})` });
    const list = [...rows.values()];
    const [comps, prods] = await Promise.all([competitorMap(), productsByIds(list.map((r) => r.l.product_id))]);
    put(
      slot,
      list.length === 0
        ? h('p', { class: 'notice ok', 'data-testid': 'attention-none' }, 'Every listing was checked on time, its last check worked and no price is held.')
        : table(
            'Listings that need attention',
            [
              { title: 'Product', cell: (r) => h('a', { href: href(`/products/${r.l.product_id}`) }, prods.get(r.l.product_id)?.name ?? r.l.product_id) },
              { title: 'Where', cell: (r) => competitorName(comps, r.l.competitor_id) },
              { title: 'Why', cell: (r) => badge(r.why, r.l.status === 'ok' || r.l.status === 'pending' ? 'warn' : 'bad') },
              { title: 'Last error', cell: (r) => (r.why.startsWith('price held') ? (r.l.held?.reason ?? '—') : (r.l.last_error ?? '—')) },
              { title: 'Last checked', cell: (r) => relative(r.l.last_checked_at) },
              { title: 'Page', cell: (r) => extLink(r.l.url, hostOf(r.l.url)) },
              { title: '', cell: (r) => h('a', { href: href('/listings', { product_id: r.l.product_id }) }, 'Open listings') },
            ],
            list,
          ),
      failing.pagination.has_more || flagged.pagination.has_more ? h('p', null, h('a', { href: href('/listings', { status: 'failing' }) }, 'More failing listings')) : null,
    );
  } catch (err) {
    if (!ctx.signal.aborted) put(slot, errorBox(err));
  }
}

export function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return u.host + (u.pathname.length > 1 ? u.pathname.slice(0, 40) : '');
  } catch {
    return url;
  }
}
