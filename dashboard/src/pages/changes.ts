import { ph } from '../api';
import { h, put } from '../dom';
import { money, percent, stock, when } from '../format';
import { competitorMap, competitorName, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { href } from '../router';
import type { Competitor, PriceChange, Query } from '../types';
import { errorBox, loading, listPager, reloadPage, table } from '../ui';

type Kind = NonNullable<Query<'/api/v1/price-changes'>['kind']>;
type Series = NonNullable<Query<'/api/v1/price-changes'>['series']>;
const KINDS: Record<Kind, string> = {
  up: 'Prices up',
  down: 'Prices down',
  moved: 'Prices up or down',
  back_in_stock: 'Back in stock',
  out_of_stock: 'Out of stock',
};
const isKind = (k: string): k is Kind => Object.hasOwn(KINDS, k);

/** GET /price-changes with the filters a market tile of the overview links with. */
export async function changesPage(ctx: PageContext): Promise<void> {
  const kind = ctx.query.get('kind') ?? '';
  const since = ctx.query.get('since') ?? '';
  const cursor = ctx.query.get('cursor');
  const seriesAsked = ctx.query.get('series');
  const series: Series | undefined = seriesAsked === 'own' || seriesAsked === 'competitors' ? seriesAsked : undefined;
  const base = { kind: isKind(kind) ? kind : undefined, since: since || undefined, series };
  const whose = series === 'own' ? ' (our prices)' : series === 'competitors' ? " (competitors' prices)" : '';
  pageHeader(ctx, `${isKind(kind) ? KINDS[kind] : 'Price changes'}${since ? ` since ${when(since)}` : ''}${whose}`);
  const slot = h('div', null, loading());
  ctx.main.append(h('p', null, h('a', { href: '#/' }, '‹ Overview')), slot);
  try {
    const [page, comps] = await Promise.all([
      ph.GET('/api/v1/price-changes', {
        params: { query: { ...base, cursor: cursor ?? undefined, limit: 50 } },
        signal: ctx.signal,
      }),
      competitorMap().catch(() => new Map<string, Competitor>()),
    ]);
    const prods = await productsByIds(page.data.map((c) => c.product_id));
    put(
      slot,
      table(
        'Changes, newest first',
        [
          { title: 'Observed', cell: (c: PriceChange) => when(c.new.observed_at) },
          {
            title: 'Product',
            cell: (c) =>
              h('a', { href: href(`/products/${c.product_id}`) }, prods.get(c.product_id)?.name ?? c.product_id),
          },
          { title: 'Seller', cell: (c) => competitorName(comps, c.competitor_id) },
          { title: 'Before', class: 'num', cell: (c) => money(c.old.price, c.old.currency) },
          { title: 'After', class: 'num', cell: (c) => money(c.new.price, c.new.currency) },
          {
            title: 'Change',
            class: 'num',
            cell: (c) =>
              h(
                'span',
                { class: c.change && c.change.amount < 0 ? 'down' : c.change && c.change.amount > 0 ? 'up' : '' },
                c.change ? percent(c.change.percent) : 'currency changed',
              ),
          },
          {
            title: 'Stock',
            cell: (c) =>
              c.old.in_stock === c.new.in_stock
                ? stock(c.new.in_stock)
                : `${stock(c.old.in_stock)} → ${stock(c.new.in_stock)}`,
          },
          { title: 'By', cell: (c) => (c.source === 'scrape' ? 'a check' : 'the API') },
        ],
        page.data,
        'No such change in this period.',
      ),
      listPager('/changes', base, cursor, page.pagination),
    );
  } catch (err) {
    if (!ctx.signal.aborted) put(slot, errorBox(err, { retry: reloadPage }));
  }
}
