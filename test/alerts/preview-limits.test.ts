import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { createKey } from '../../src/auth/keys.js';
import { createCompetitor } from '../../src/competitors/service.js';
import { createProduct } from '../../src/products/service.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { useTestApp } from '../helpers/app.js';
import { testStorage } from '../helpers/database.js';
import { spawnServer } from '../helpers/server-process.js';
import type { Headers } from '../products/support.js';
import { at, catalogue } from './engine-support.js';
import type { AlertEvent } from '../helpers/api-types.js';

/**
 * A preview's bounds (issue 22): its time limit (ALERT_PREVIEW_TIMEOUT: the answer says how far
 * it got), a few at a time per process and one per account (503 with Retry-After when the wait
 * is over), and a client that goes away stops the work.
 */

// The limit is 1 ms: a preview reads one page (2 000 observations of a series), then stops.
const t = useTestApp({ ALERT_PREVIEW_TIMEOUT: '1ms', ALERT_PREVIEW_CONCURRENCY: '1' });

/** `n` observations of the catalogue's first competitor, one every 10 minutes from at(0), prices going up and down. */
async function seed(
  app: { inject: typeof t.app.inject },
  headers: Headers,
  productId: string,
  competitorId: string,
  n: number,
) {
  for (let i = 0; i < n; i += 1000) {
    const observations = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
      product_id: productId,
      competitor_id: competitorId,
      price: Math.round((50 + Math.sin((i + k) / 40) * 8) * 100) / 100,
      currency: 'EUR',
      observed_at: new Date(Date.parse(at(0)) + (i + k) * 600_000).toISOString(),
    }));
    const res = await app.inject({ method: 'POST', url: '/api/v1/prices', headers, payload: { observations } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  }
}

const RULE = { name: 'low', condition: { type: 'lowest_in_days', days: 2 }, rearm: 'every_change' };

describe('alert preview: bounds', () => {
  it('stops at its time limit and says how far it got: the events of the observations before `through`', async () => {
    const c = await catalogue(t);
    await seed(t.app, c.headers, c.productId, c.competitorId, 2500);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts/preview',
      headers: c.headers,
      payload: { ...RULE, from: at(0), to: at(24 * 30) },
    });
    assert.equal(res.statusCode, 200, res.body);
    const cut = res.json<{ data: AlertEvent[]; count: number; complete: boolean; through: string }>();
    assert.equal(cut.complete, false);
    // One page: the first 2 000 observations, so the evaluated range ends at the 2 000th.
    assert.equal(cut.through, new Date(Date.parse(at(0)) + 1999 * 600_000).toISOString());
    assert.ok(cut.count > 0 && cut.data.every((e) => e.current!.observed_at < cut.through));
    // The same rule over [from, through) in full (a range one page holds) fires the same.
    const whole = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts/preview',
      headers: c.headers,
      payload: { ...RULE, from: at(0), to: cut.through },
    });
    const full = whole.json<{ data: AlertEvent[]; complete: boolean }>();
    assert.equal(full.complete, true);
    assert.deepEqual(cut.data, full.data);
  });

  it('runs one at a time here; the one that waited longer than the limit is a 503 with Retry-After, in our error shape', async () => {
    const c = await catalogue(t);
    const d = await catalogue(t);
    await seed(t.app, c.headers, c.productId, c.competitorId, 4000);
    const ask = (headers: Headers) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts/preview',
        headers,
        payload: { ...RULE, from: at(0), to: at(24 * 30) },
      });
    const answers = await Promise.all([ask(c.headers), ask(d.headers)]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 503]);
    const busy = answers.find((r) => r.statusCode === 503)!;
    assert.match(busy.headers['retry-after'] as string, /^\d+$/);
    assert.deepEqual(Object.keys(busy.json()).sort(), ['code', 'error', 'request_id', 'status']);
    assert.equal(busy.json<{ code: string }>().code, 'unavailable');
  });
});

describe('alert matches: bounds', () => {
  it('run one at a time here as previews do; the one that waited longer than the limit is a 503 with Retry-After', async () => {
    const c = await catalogue(t);
    const d = await catalogue(t);
    // c's question reads a long history (the lowest of 365 days), long enough for d's to wait.
    await seed(t.app, c.headers, c.productId, c.competitorId, 4000);
    const ask = (headers: Headers) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts/matches',
        headers,
        payload: { name: 'low', condition: { type: 'lowest_in_days', days: 365 } },
      });
    assert.equal((await ask(d.headers)).statusCode, 200); // d's key cached
    const answers = await Promise.all([ask(c.headers), ask(d.headers)]);
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [200, 503],
    );
    const busy = answers[1]!;
    assert.match(busy.headers['retry-after'] as string, /^\d+$/);
    assert.equal(busy.json<{ code: string }>().code, 'unavailable');
  });
});

describe('alert preview: a client that goes away', () => {
  it('stops the work: the server reads no further and says so', { timeout: 180_000 }, async () => {
    const storage = await testStorage();
    const db = await openDatabase(loadConfig(storage.env));
    const total = 6_000; // three pages
    let key: string;
    try {
      await migrate(db);
      const created = await createKey(db, { plan: 'business' });
      key = created.key;
      // Seeded before the server starts (PGlite has one owner), in one statement: the preview
      // reads these pages whichever way they were written, and requests of 1 000 cost more than
      // the test itself.
      const product = await createProduct(db, created.account_id, { name: 'Kettle', base_price: 50, currency: 'EUR' });
      const rival = await createCompetitor(db, created.account_id, { name: 'Rival', website: 'https://rival.example' });
      await db.query(
        `insert into price_observations (account_id, product_id, competitor_id, price, currency, observed_at, source)
         select $1, $2, $3, round((50 + sin(i / 40.0) * 8)::numeric, 2), 'EUR', $4::timestamptz + i * interval '10 minutes', 'api'
           from generate_series(0, $5::int - 1) as i
          order by i`,
        [created.account_id, product.id, rival.id, at(0), total],
      );
    } finally {
      await db.close();
    }
    const server = await spawnServer({ ...storage.env, ALERT_PREVIEW_TIMEOUT: '120s' });
    try {
      // A first, short preview: the key is cached and the route's schemas compiled, so the one
      // below is past them and into its pages well within the 50 ms its client waits.
      const warm = await fetch(`${server.url}/api/v1/alerts/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...RULE, from: at(0), to: at(1) }),
      });
      assert.equal(warm.status, 200, await warm.text());
      // The preview is sent over a raw socket, which closes before the answer.
      const { port, hostname } = new URL(server.url);
      const body = JSON.stringify({ ...RULE, from: at(0), to: at(24 * 200) });
      const socket = net.connect(Number(port), hostname);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /api/v1/alerts/preview HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      // Logged only when the preview stopped before its answer was computed (the abort is checked
      // between every page read and every slice of points judged).
      const stopped = await server.waitForLog((l) => l.msg === 'alert preview stopped: the client went away');
      assert.ok(
        typeof stopped.observations_read === 'number' && stopped.observations_read <= total,
        `read ${String(stopped.observations_read)} of ${total}`,
      );
    } finally {
      await server.stop();
      await storage.cleanup();
    }
  });
});
