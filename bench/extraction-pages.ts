// Price and availability on the shared real product pages, each put through a real check:
// served from a local web site on 127.0.0.1 (gzip, as the benchmark served them), fetched,
// extracted and recorded by the service over its HTTP API ("check now" on a listing per page),
// scored as Zyte's product-extraction benchmark scores (bench/lib/product-pages.ts).
//   npm run bench:extraction-pages          (also the second half of `npm run bench:extraction`)
//
// The pages are read where they lie (../shared/data/product-pages, or PRODUCT_PAGES_DIR), never
// copied. Storage: a temporary PGlite DATA_DIR, or PostgreSQL with DATABASE_URL (a fresh schema,
// dropped afterwards). Prints the scores, every wrong price (a wrong number is worse than none)
// and, with BENCH_PAGES_VERBOSE=1, every page's answer. BENCH_PAGES_DUMP=FILE writes every
// check as the API returned it to FILE (keep it outside the repository: it quotes the pages).
// Nothing is sent anywhere but 127.0.0.1.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync as gunzip } from 'node:zlib';
import pg from 'pg';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { createKey } from '../src/auth/keys.js';
import type { CheckResult } from '../src/checks/schemas.js';
import { loadConfig } from '../src/config.js';
import { createRuntime } from '../src/runtime.js';
import { machine, writeResult } from './lib/common.js';
import {
  emptyScore,
  formatScore,
  PRODUCT_PAGES_DIR,
  type ProductPage,
  prf,
  productPages,
  readPageGzip,
  scoreAvailability,
  scorePrice,
  type Verdict,
} from './lib/product-pages.js';

if (!fs.existsSync(path.join(PRODUCT_PAGES_DIR, 'ground-truth.json'))) {
  console.log(`no product pages at ${PRODUCT_PAGES_DIR}: skipped`);
  process.exit(0);
}
const pages = productPages();
const byKey = new Map(pages.map((p) => [p.key, p]));

/** The page's own path and query under /<key>, so a `?variant=` in it still reaches the extractor. */
function localPath(p: ProductPage): string {
  const u = new URL(p.url);
  return `/${p.key}${u.pathname}${u.search}`;
}

// The shop: each page at /<key>/<its path>, gzip when accepted, no robots.txt.
const site = http.createServer((req, res) => {
  const key = (req.url ?? '').split('/')[1] ?? '';
  const page = byKey.get(key);
  if (!page) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    return;
  }
  const gz = readPageGzip(page);
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    res
      .writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': gz.length })
      .end(gz);
  } else {
    const html = Buffer.from(gunzip(gz));
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': html.length }).end(html);
  }
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

// The service: its own storage, checks may reach 127.0.0.1, one host so no per-domain delay.
const suffix = crypto.randomBytes(4).toString('hex');
let dataDir: string | undefined;
let schema: string | undefined;
const storageEnv: Record<string, string> = {};
if (process.env.DATABASE_URL) {
  schema = `bench_pages_${suffix}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(process.env.DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  storageEnv.DATABASE_URL = url.toString();
} else {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-bench-pages-'));
  Object.assign(storageEnv, { DATA_DIR: dataDir, DATABASE_URL: '' });
}
const config = loadConfig({
  ...process.env,
  ...storageEnv,
  REDIS_URL: '',
  ALLOW_LOOPBACK_TARGETS: 'true',
  FETCH_DOMAIN_DELAY_MS: '0',
  FETCH_DOMAIN_CONCURRENCY: '100',
  FETCH_TIMEOUT_MS: '20000',
  AUTH_FAILURE_LIMIT: '100000',
});
const rt = await createRuntime(config, pino({ level: process.env.LOG_LEVEL ?? 'silent' }));
const app = await buildApp(rt);
await app.listen({ host: '127.0.0.1', port: 0 });
const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1`;

interface Row {
  page: ProductPage;
  check: CheckResult;
  price: Verdict;
  availability: Verdict;
}
const rows: Row[] = [];
const price = emptyScore();
const availability = emptyScore();
const started = Date.now();
try {
  const key = await createKey(rt.db, { plan: 'business', accountId: null });
  const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
  const call = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${api}${url}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const product = await call<{ id: string }>('POST', '/products', {
    name: 'Benchmark product',
    base_price: 100,
    currency: 'EUR',
  });
  // Four checks at a time: enough to keep the 2 cores busy, few enough for a shared machine.
  const queue = [...pages];
  const lane = async (): Promise<void> => {
    for (let p = queue.shift(); p; p = queue.shift()) {
      const listing = await call<{ id: string }>('POST', '/listings', {
        product_id: product.id,
        url: `${siteUrl}${localPath(p)}`,
      });
      const check = await call<CheckResult>('POST', `/listings/${listing.id}/check`);
      const got = check.ok && check.price !== null ? String(check.price) : null;
      const stock = check.in_stock === null ? null : check.in_stock ? 'InStock' : 'OutOfStock';
      rows.push({
        page: p,
        check,
        price: scorePrice(price, p.prices, got),
        availability: scoreAvailability(availability, p.availability, stock),
      });
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
} finally {
  await app.close();
  await rt.close();
  await new Promise<void>((resolve) => site.close(() => resolve()));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  if (schema) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}
rows.sort((a, b) => a.page.key.localeCompare(b.page.key));

const host = (p: ProductPage): string => new URL(p.url).hostname.replace(/^www\./, '');
const answer = (c: CheckResult): string => (c.ok ? `${c.price} ${c.currency} (${c.source})` : `none: ${c.error_code}`);
console.log(
  `\n${rows.length} shared product pages through a real check (${((Date.now() - started) / 1000).toFixed(1)} s), ${PRODUCT_PAGES_DIR}`,
);
if (process.env.BENCH_PAGES_VERBOSE === '1') {
  for (const r of rows) {
    console.log(
      `  ${r.page.key.slice(0, 8)} ${host(r.page).padEnd(28)} price ${r.price.padEnd(5)} ${answer(r.check)} [truth ${r.page.prices.join('|') || '-'}]` +
        `  stock ${r.availability} ${r.check.in_stock} [${r.page.availability ?? '-'}]`,
    );
  }
}
console.log(`  price         ${formatScore(price)}`);
console.log(`  availability  ${formatScore(availability)}`);
const wrong = rows.filter((r) => r.price === 'wrong');
console.log(`\nwrong prices (${wrong.length}):`);
for (const r of wrong)
  console.log(
    `  ${r.page.key.slice(0, 8)} ${host(r.page)}: recorded ${answer(r.check)}, the page's price ${r.page.prices.join(' or ') || 'none'}`,
  );
const wrongStock = rows.filter((r) => r.availability === 'wrong');
console.log(`wrong availability (${wrongStock.length}):`);
for (const r of wrongStock)
  console.log(
    `  ${r.page.key.slice(0, 8)} ${host(r.page)}: recorded in_stock ${r.check.in_stock}, the page says ${r.page.availability}`,
  );
const refused = rows.filter((r) => r.price === 'none');
console.log(`no price recorded where the page has one (${refused.length}):`);
for (const r of refused)
  console.log(
    `  ${r.page.key.slice(0, 8)} ${host(r.page)}: ${r.check.error_code}: ${(r.check.error ?? '').slice(0, 240)}`,
  );

if (process.env.BENCH_PAGES_DUMP) {
  fs.writeFileSync(
    process.env.BENCH_PAGES_DUMP,
    JSON.stringify(
      rows.map((r) => ({
        key: r.page.key,
        url: r.page.url,
        truth: r.page.prices,
        stock: r.page.availability,
        check: r.check,
      })),
      null,
      1,
    ),
  );
}
// Figures only (no page content): the keys of the pages answered wrongly.
const round3 = (x: number) => Math.round(x * 1000) / 1000;
writeResult(process.env.BENCH_RESULT ?? 'extraction-pages', {
  machine: machine(),
  pages: rows.length,
  price: { ...price, ...Object.fromEntries(Object.entries(prf(price)).map(([k, v]) => [k, round3(v)])) },
  availability: {
    ...availability,
    ...Object.fromEntries(Object.entries(prf(availability)).map(([k, v]) => [k, round3(v)])),
  },
  wrongPrices: wrong.map((r) => r.page.key),
  wrongAvailability: wrongStock.map((r) => r.page.key),
  noPrice: refused.map((r) => r.page.key),
});
