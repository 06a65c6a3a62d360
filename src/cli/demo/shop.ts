import http from 'node:http';
import { once } from 'node:events';
import { targetOf } from '../../fetcher/address-guard.js';
import { DEMO_COMPETITORS, type DemoProduct, priceAt } from './catalogue.js';

/**
 * The demo's competitor shops, all on one loopback port: /<competitor>/p/<sku> is a product page
 * with its price in JSON-LD (schema.org Product/Offer), as real shops publish it, from the same
 * price model as the back-filled history (./catalogue.ts), so checks continue the charts.
 */
export interface DemoShop {
  url: string;
  /** Its `address:port`: the one loopback target the demo opens to outbound requests. */
  target: string;
  close(): Promise<void>;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(product: DemoProduct, competitorName: string, price: number, inStock: boolean): string {
  const ld = {
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: product.name,
    sku: product.sku,
    brand: { '@type': 'Brand', name: product.brand },
    offers: {
      '@type': 'Offer',
      price: price.toFixed(2),
      priceCurrency: 'EUR',
      availability: inStock ? 'https://schema.org/InStock' : 'https://schema.org/OutOfStock',
    },
  };
  // '<' escaped inside the script: the JSON can never end the element.
  const json = JSON.stringify(ld).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(product.name)} | ${escapeHtml(competitorName)}</title>
<script type="application/ld+json">${json}</script></head>
<body><h1>${escapeHtml(product.name)}</h1><p class="price">€${price.toFixed(2)}</p>
<p>${inStock ? 'In stock' : 'Out of stock'}</p></body></html>
`;
}

export async function startDemoShop(products: DemoProduct[], port: number, host = '127.0.0.1'): Promise<DemoShop> {
  const bySku = new Map(products.map((p) => [p.sku, p]));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    if (url.pathname === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const m = /^\/([a-z]+)\/p\/([A-Z]+-\d+)$/.exec(url.pathname);
    const competitor = m ? DEMO_COMPETITORS.find((c) => c.slug === m[1]) : undefined;
    const product = m ? bySku.get(m[2]!) : undefined;
    if (!competitor || !product) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const { price, inStock } = priceAt(product, competitor, new Date());
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(page(product, competitor.name, price, inStock));
  });
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host}:${actual}`,
    target: targetOf(host, actual),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
