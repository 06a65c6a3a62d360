import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { useListeningApp } from './support.js';

const PRODUCTS = 3000;

describe('hardening: long CSV exports stream in pages and never starve short requests', () => {
  const t = useTestApp();
  const l = useListeningApp(t);

  // PostgreSQL: not yet; the pool serves pages and short requests first come, first served (see the report).
  it(
    'short requests sent beside two exports of 3000 products all finish before the exports do',
    { skip: process.env.DATABASE_URL ? 'embedded engine only for now' : false },
    async () => {
      const { headers } = await t.newKey('business');
      for (let start = 0; start < PRODUCTS; start += 1000) {
        const products = Array.from({ length: 1000 }, (_, i) => ({
          name: `P${start + i}`,
          sku: `SKU-${start + i}`,
          base_price: 10 + i,
          currency: 'USD',
        }));
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/products/batch',
          headers,
          payload: { products },
        });
        assert.ok(res.statusCode < 300 && !res.body.includes(`"status":422`), res.body.slice(0, 300));
      }
      const first = (await t.app.inject({ method: 'GET', url: '/api/v1/products?limit=1', headers })).json<{
        data: { id: string }[];
      }>().data[0]!;
      const base = `http://127.0.0.1:${l.port}/api/v1`;
      const { 'content-type': _omit, ...getHeaders } = headers;

      // Warm: the key's cache entry and each route's first compile are not what is measured.
      for (const url of [`${base}/usage`, `${base}/products/${first.id}`, `${base}/products.csv?sort=name`])
        await fetch(url, { headers: getHeaders }).then((r) => r.text());

      const finished: { kind: string; at: number }[] = [];
      const timed = async (kind: string, url: string, check: (body: string) => void) => {
        const res = await fetch(url, { headers: getHeaders });
        const body = await res.text();
        assert.equal(res.status, 200, body.slice(0, 300));
        check(body);
        finished.push({ kind, at: performance.now() });
      };
      const exports = [0, 1].map(() =>
        timed('export', `${base}/products.csv`, (csv) =>
          assert.equal(csv.trimEnd().split('\r\n').length, PRODUCTS + 1),
        ),
      );
      // The exports' first pages are under way before the short requests start.
      await new Promise((r) => setImmediate(r));
      const shorts = Array.from({ length: 20 }, (_, i) =>
        timed('short', i % 2 ? `${base}/products/${first.id}` : `${base}/usage`, (body) =>
          assert.ok(body.startsWith('{')),
        ),
      );
      await Promise.all([...exports, ...shorts]);
      const lastShort = Math.max(...finished.filter((f) => f.kind === 'short').map((f) => f.at));
      const firstExport = Math.min(...finished.filter((f) => f.kind === 'export').map((f) => f.at));
      assert.ok(
        lastShort < firstExport,
        `the last short request finished ${(lastShort - firstExport).toFixed(0)} ms after the first export`,
      );
    },
  );
});
