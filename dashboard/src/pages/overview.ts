import { NEAR_LIMIT, ph } from '../api';
import { usageChart } from '../charts/usage-chart';
import { type Child, extLink, h, put } from '../dom';
import { count, countdown, money, percent, relative } from '../format';
import { competitorMap, competitorName, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { href } from '../router';
import { listPositions, type PositionRow, positionSummary, unavailable } from '../positions';
import type { Listing, Query, Usage } from '../types';
import { badge, emptyState, errorBox, loadInto, loading, section, table } from '../ui';

type Series = NonNullable<Query<'/api/v1/price-changes/summary'>['series']>;

/** How far past its due time a listing counts as "not checked on time". */
const OVERDUE_GRACE_MS = 15 * 60_000;

/**
 * The Overview opens on the market: where we stand now (undercut, by whom and how much;
 * cheapest, in between, dearest), then what changed since yesterday with our own prices and the
 * competitors' apart, then what needs attention; the key's usage comes last. Every number links
 * to the list it counts.
 */
export async function overviewPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Overview');
  const standSlot = h('div', { 'data-testid': 'where-we-stand' }, loading('Loading where we stand…'));
  const marketSlot = h('div', null, loading());
  const attentionSlot = h('div', null, loading());
  const usageSlot = h('div', null, loading());
  ctx.main.append(
    section('Where we stand', standSlot),
    section(
      'What changed',
      h(
        'p',
        { class: 'muted' },
        "Price changes seen by checks and sent through the API, the competitors' and our own apart. Each tile opens the list it counts.",
      ),
      marketSlot,
    ),
    section('Needs attention', attentionSlot),
    section('Usage this hour', usageSlot),
  );
  await Promise.all([
    renderStand(ctx, standSlot),
    renderMarket(ctx, marketSlot),
    renderAttention(ctx, attentionSlot),
    renderUsage(ctx, usageSlot),
  ]);
}

/** Where we stand, from GET /positions/summary and the five most undercut products of GET /positions. */
async function renderStand(ctx: PageContext, slot: HTMLElement): Promise<void> {
  await loadInto(
    slot,
    ctx.signal,
    async () => {
      try {
        const [summary, worst] = await Promise.all([
          positionSummary(ctx.signal),
          listPositions({ undercut: true, sort: '-gap_percent', limit: 5 }, ctx.signal),
        ]);
        return { summary, worst: worst.data, more: worst.pagination.has_more };
      } catch (err) {
        if (unavailable(err)) return null;
        throw err;
      }
    },
    (r) => {
      if (r === null) {
        return emptyState(
          "Positions are not available on this server yet (GET /api/v1/positions answered 404): each product's page still shows where it stands.",
        );
      }
      const { summary: s, worst } = r;
      const compared = s.cheapest + s.in_between + s.dearest;
      const list = (query: Record<string, string | number>) => href('/products', query);
      return [
        h(
          'ul',
          { class: 'tiles', 'data-testid': 'position-tiles' },
          tile(
            'Undercut now',
            count(s.undercut),
            list({ undercut: 'true', sort: '-gap_percent' }),
            s.undercut > 0 ? 'up' : 'down',
            'a competitor is cheaper',
          ),
          tile(
            'Cheapest',
            count(s.cheapest),
            list({ standing: 'cheapest', sort: 'name' }),
            'down',
            `of ${count(compared)} compared`,
          ),
          tile(
            'In between',
            count(s.in_between),
            list({ standing: 'in_between', sort: '-gap_percent' }),
            'flat',
            'cheaper than some',
          ),
          tile(
            'Dearest',
            count(s.dearest),
            list({ standing: 'dearest', sort: '-gap_percent' }),
            'up',
            'every competitor is cheaper',
          ),
          tile('Nothing to compare', count(s.alone), null, 'flat', 'no competitor price yet'),
        ),
        worst.length === 0
          ? h(
              'p',
              { class: 'notice ok', 'data-testid': 'undercut-none' },
              'No competitor is cheaper than us on any product.',
            )
          : [
              table(
                'Most undercut now',
                [
                  {
                    title: 'Product',
                    cell: (p: PositionRow) => h('a', { href: href(`/products/${p.product_id}`) }, p.name),
                  },
                  { title: 'Our price', class: 'num', cell: (p) => money(p.own_price, p.currency) },
                  {
                    title: 'Cheapest competitor',
                    cell: (p) =>
                      p.cheapest
                        ? [p.cheapest.name, ' ', h('span', { class: 'money' }, money(p.cheapest.price, p.currency))]
                        : '—',
                  },
                  {
                    title: 'Gap',
                    class: 'num',
                    cell: (p) => [
                      money(p.gap_amount, p.currency),
                      h('br'),
                      h('span', { class: 'muted' }, percent(p.gap_percent)),
                    ],
                  },
                  { title: 'Undercut by', class: 'num', cell: (p) => `${count(p.undercut_by)} of ${count(p.of - 1)}` },
                ],
                worst,
              ),
              h(
                'p',
                null,
                h(
                  'a',
                  { href: list({ undercut: 'true', sort: '-gap_percent' }) },
                  `All ${count(s.undercut)} undercut products, most undercut first`,
                ),
              ),
            ],
        s.histogram.length > 0
          ? h(
              'p',
              null,
              h(
                'a',
                { href: href('/products', { sort: '-price_index' }) },
                'The price index of every product (chart and list)',
              ),
            )
          : null,
      ];
    },
  );
}

async function renderUsage(ctx: PageContext, slot: HTMLElement): Promise<void> {
  let chart: { destroy: () => void } | null = null;
  let tick: () => void = () => undefined;
  const refresh = h(
    'button',
    { type: 'button', class: 'secondary small', onclick: () => void load() },
    'Refresh usage',
  );
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
    const meter = h('meter', {
      min: 0,
      max: usage.limit,
      value: usage.used,
      low: usage.limit * NEAR_LIMIT,
      high: usage.limit * 0.95,
      optimum: 0,
      'aria-label': 'Requests used this hour',
    });
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
  const periods: [string, string, string][] = [
    ['Since yesterday', '24h', new Date(now - 86_400_000).toISOString()],
    ['Last 7 days', '7d', new Date(now - 7 * 86_400_000).toISOString()],
  ];
  const whose: [Series, string][] = [
    ['competitors', "Competitors' prices"],
    ['own', 'Our prices'],
  ];
  const groups = periods.flatMap(([title, key, since]) =>
    whose.map(([series, label]) => ({ title, key, since, series, label })),
  );
  await loadInto(
    slot,
    ctx.signal,
    () =>
      Promise.all(
        groups.map((g) =>
          ph.GET('/api/v1/price-changes/summary', {
            params: { query: { since: g.since, series: g.series } },
            signal: ctx.signal,
          }),
        ),
      ),
    (summaries) =>
      groups.map((g, i) => {
        const s = summaries[i]!;
        const link = (kind: string) => href('/changes', { since: g.since, kind, series: g.series });
        return h(
          'div',
          { class: 'tiles-group' },
          h('h3', null, `${g.title}: ${g.label.toLowerCase()}`),
          h(
            'ul',
            { class: 'tiles', 'data-testid': `market-${g.key}-${g.series}` },
            tile('Prices up', count(s.up), link('up'), 'up'),
            tile('Prices down', count(s.down), link('down'), 'down'),
            // Not a list of changes, so no link: the series observed in the period whose price stayed put.
            tile(
              'Unchanged',
              count(s.series_unchanged),
              null,
              'flat',
              `of ${count(s.series_observed)} series observed`,
            ),
            tile(
              'Average change',
              percent(s.average_percent),
              link('moved'),
              s.average_percent !== null && s.average_percent < 0 ? 'down' : 'up',
              'of the rises and drops',
            ),
            tile('Back in stock', count(s.back_in_stock), link('back_in_stock'), 'up'),
            tile('Out of stock', count(s.out_of_stock), link('out_of_stock'), 'down'),
          ),
        );
      }),
  );
}

function tile(label: string, value: string, link: string | null, kind: string, note?: string): HTMLElement {
  const content = [
    h('span', { class: 'tile-value' }, value),
    h('span', { class: 'tile-label' }, label),
    note ? h('span', { class: 'tile-note' }, note) : null,
  ];
  return h(
    'li',
    null,
    link ? h('a', { class: `tile ${kind}`, href: link }, content) : h('div', { class: `tile ${kind}` }, content),
  );
}

async function renderAttention(ctx: PageContext, slot: HTMLElement): Promise<void> {
  try {
    const [failing, flagged, dueFirst, held] = await Promise.all([
      ph.GET('/api/v1/listings', { params: { query: { status: 'failing', limit: 20 } }, signal: ctx.signal }),
      ph.GET('/api/v1/listings', { params: { query: { status: 'flagged', limit: 20 } }, signal: ctx.signal }),
      ph.GET('/api/v1/listings', {
        params: { query: { enabled: true, sort: 'next_check_at', limit: 20 } },
        signal: ctx.signal,
      }),
      ph.GET('/api/v1/listings', { params: { query: { held: true, limit: 20 } }, signal: ctx.signal }),
    ]);
    const now = Date.now();
    const overdue = dueFirst.data.filter(
      (l) => l.next_check_at && new Date(l.next_check_at).getTime() < now - OVERDUE_GRACE_MS,
    );
    const rows = new Map<string, { l: Listing; why: string }>();
    for (const l of flagged.data) rows.set(l.id, { l, why: 'flagged: failing repeatedly' });
    for (const l of failing.data) rows.set(l.id, { l, why: 'last check failed' });
    for (const l of held.data) if (!rows.has(l.id)) rows.set(l.id, { l, why: 'price held: accept or reject it' });
    for (const l of overdue)
      if (!rows.has(l.id)) rows.set(l.id, { l, why: `not checked on time (due ${relative(l.next_check_at, now)})` });
    const list = [...rows.values()];
    const [comps, prods] = await Promise.all([competitorMap(), productsByIds(list.map((r) => r.l.product_id))]);
    put(
      slot,
      list.length === 0
        ? h(
            'p',
            { class: 'notice ok', 'data-testid': 'attention-none' },
            'Every listing was checked on time, its last check worked and no price is held.',
          )
        : table(
            'Listings that need attention',
            [
              {
                title: 'Product',
                cell: (r) =>
                  h(
                    'a',
                    { href: href(`/products/${r.l.product_id}`) },
                    prods.get(r.l.product_id)?.name ?? r.l.product_id,
                  ),
              },
              { title: 'Where', cell: (r) => competitorName(comps, r.l.competitor_id) },
              {
                title: 'Why',
                cell: (r) => badge(r.why, r.l.status === 'ok' || r.l.status === 'pending' ? 'warn' : 'bad'),
              },
              {
                title: 'Last error',
                cell: (r) => (r.why.startsWith('price held') ? (r.l.held?.reason ?? '—') : (r.l.last_error ?? '—')),
              },
              { title: 'Last checked', cell: (r) => relative(r.l.last_checked_at) },
              { title: 'Page', cell: (r) => extLink(r.l.url, hostOf(r.l.url)) },
              {
                title: '',
                cell: (r) => h('a', { href: href('/listings', { product_id: r.l.product_id }) }, 'Open listings'),
              },
            ],
            list,
          ),
      failing.pagination.has_more || flagged.pagination.has_more
        ? h('p', null, h('a', { href: href('/listings', { status: 'failing' }) }, 'More failing listings'))
        : null,
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
