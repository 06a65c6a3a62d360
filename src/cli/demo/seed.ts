import { BATCH_MAX, type PriceObservationInput, type PricehoundClient } from '@pricehound/client';
import type { Progress } from '../progress.js';
import { DEMO_COMPETITORS, type DemoCompetitor, type DemoProduct, priceAt, sellers, unit } from './catalogue.js';
import { DAY_MS, HOUR_MS } from '../../time.js';

export interface SeedOptions {
  products: DemoProduct[];
  /** Days of history before today. */
  days: number;
  /** The demo shop's base URL: the listings point at its pages. */
  shopUrl: string;
  /** How often the worker checks each listing. */
  checkIntervalSeconds: number;
}

export interface SeedResult {
  products: number;
  competitors: number;
  listings: number;
  observations: number;
  alerts: number;
}

/**
 * Fills an account through its HTTP API with the typed client, as any client would: the
 * competitors, the catalogue, a listing per product and competitor on the demo shop, and `days`
 * of daily observations of every series (ours and the competitors'), backdated through POST
 * /prices (the client sends them 1000 a request).
 */
export async function seedDemo(ph: PricehoundClient, opts: SeedOptions, bar: Progress): Promise<SeedResult> {
  const competitorIds = new Map<string, string>();
  for (const c of DEMO_COMPETITORS) {
    const created = await ph.POST('/api/v1/competitors', {
      body: {
        name: c.name,
        website: `${opts.shopUrl}/${c.slug}/`,
        notes: 'A demo shop served by `pricehound demo` on this machine',
      },
    });
    competitorIds.set(c.slug, created.id);
  }

  const batch = await ph.createProducts(
    opts.products.map((p) => ({ ...p, currency: 'EUR' })),
    { atomic: true },
  );
  const productIds = new Map(
    batch.data.flatMap((d) => (d.status === 201 ? [[opts.products[d.index]!.sku, d.product.id] as const] : [])),
  );

  const listings: { product: DemoProduct; competitor: DemoCompetitor; id: string }[] = [];
  for (const product of opts.products) {
    for (const competitor of sellers(product)) {
      const l = await ph.POST('/api/v1/listings', {
        body: {
          product_id: productIds.get(product.sku)!,
          competitor_id: competitorIds.get(competitor.slug)!,
          url: `${opts.shopUrl}/${competitor.slug}/p/${product.sku}`,
          check_interval_seconds: opts.checkIntervalSeconds,
        },
      });
      listings.push({ product, competitor, id: l.id });
    }
    bar.update(listings.length / (opts.products.length * 4) / 4, `${listings.length} listings`);
  }

  // One observation a day per series, at an hour of its own, from `days` ago to yesterday.
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const total = (listings.length + opts.products.length) * opts.days;
  let pending: PriceObservationInput[] = [];
  let sent = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    const r = await ph.ingestPrices(pending, { atomic: true });
    sent += r.created;
    pending = [];
    bar.update(0.25 + (0.75 * sent) / Math.max(1, total), `${sent} of ${total} price observations`);
  };
  for (let d = opts.days; d >= 1; d--) {
    const series: { product: DemoProduct; competitor: DemoCompetitor | null; listingId: string | null }[] = [
      ...opts.products.map((product) => ({ product, competitor: null, listingId: null })),
      ...listings.map((l) => ({ product: l.product, competitor: l.competitor, listingId: l.id })),
    ];
    for (const s of series) {
      const hour = Math.floor(unit(s.product.sku, s.competitor?.slug ?? 'own', 'hour') * 20) + 2;
      const at = new Date(today - d * DAY_MS + hour * HOUR_MS);
      const { price, inStock } = priceAt(s.product, s.competitor, at);
      pending.push({
        product_id: productIds.get(s.product.sku)!,
        competitor_id: s.competitor ? competitorIds.get(s.competitor.slug) : null,
        listing_id: s.listingId,
        price,
        currency: 'EUR',
        in_stock: inStock,
        observed_at: at.toISOString(),
      });
      if (pending.length >= BATCH_MAX) await flush();
    }
  }
  await flush();

  // Alert rules, each fired once with a test event so the dashboard's alerts page has some.
  const first = opts.products[0]!;
  const rules = [
    { name: 'We are no longer the cheapest', condition: { type: 'not_cheapest' as const } },
    {
      name: `${first.name}: a competitor is out of stock`,
      product_id: productIds.get(first.sku)!,
      condition: { type: 'out_of_stock' as const },
    },
  ];
  for (const rule of rules) {
    const created = await ph.POST('/api/v1/alerts', { body: rule });
    await ph.POST('/api/v1/alerts/{id}/test', { params: { path: { id: created.id } } });
  }
  return {
    products: productIds.size,
    competitors: competitorIds.size,
    listings: listings.length,
    observations: sent,
    alerts: rules.length,
  };
}
