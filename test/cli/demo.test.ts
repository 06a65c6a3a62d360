import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import type { Page } from '../helpers/api-types.js';

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The key the demo prints once its data is in (the service listens before that). */
const keyOf = async (server: ServerProcess) => {
  const line = await server.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('API key: '));
  return (line.msg as string).slice('API key: '.length);
};

/** `api` reads several endpoints (lists and single objects), so items stay loose; the envelope is the schema's. */
type List = Page<Record<string, unknown>>;

describe('pricehound demo (short form: 6 products, 10 days)', () => {
  let storage: TestStorage;
  let shopPort: number;
  let server: ServerProcess | undefined;
  before(async () => {
    storage = await testStorage();
    shopPort = await freePort();
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
  });
  const args = () => ['demo', '--products', '6', '--days', '10', '--shop-port', String(shopPort)];
  const api = async (s: ServerProcess, key: string, path: string) => {
    const res = await fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200, path);
    return res.json() as Promise<List & Record<string, unknown>>;
  };

  it('creates the catalogue, listings on its shop and history, serves them, and checks the shop', async () => {
    server = await spawnServer(storage.env, args());
    const key = await keyOf(server);
    assert.match(key, /^ph_live_/);
    assert.ok(
      server.logs.some((l) => l.msg === `Dashboard: ${server!.url}/dashboard (sign in with the API key below)`),
    );

    const products = (await api(server, key, '/products?limit=100&sort=sku')).data;
    assert.equal(products.length, 6);
    assert.ok(
      products.every(
        (p) => /^(KIT|ELC)-\d{3}$/.test(String(p.sku)) && p.currency === 'EUR' && Number(p.base_price) > 0,
      ),
    );
    assert.equal((await api(server, key, '/competitors?limit=100')).data.length, 4);
    assert.equal((await api(server, key, '/alerts?limit=100')).data.length, 2);
    assert.ok((await api(server, key, '/alert-events?limit=100')).data.length >= 2);
    const listings = (await api(server, key, '/listings?limit=100')).data;
    assert.ok(listings.length >= 18 && listings.length <= 24, `${listings.length} listings`);
    assert.ok(listings.every((l) => String(l.url).startsWith(`http://127.0.0.1:${shopPort}/`)));

    // Ten days of one observation a day per series: ours and each competitor's, plus at most the
    // worker's first check of the demo shop, which may land before this read (CI saw 11 once).
    const history = await api(
      server,
      key,
      `/products/${String(products[0]!.id)}/prices?interval=day&from=${new Date(Date.now() - 12 * 86_400_000).toISOString()}`,
    );
    const series = history.series as { competitor_id: string | null; buckets: { count: number }[] }[];
    assert.ok(series.length >= 4, `${series.length} series`);
    for (const s of series) {
      const n = s.buckets.reduce((m, b) => m + b.count, 0);
      assert.ok(n === 10 || n === 11, `series ${s.competitor_id}: ${n} observations`);
    }

    // The worker checks the demo shop's pages (JSON-LD) and finds a price: wait for the first.
    const deadline = Date.now() + 90_000;
    let checked: Record<string, unknown> | undefined;
    while (!checked && Date.now() < deadline) {
      checked = (await api(server, key, '/listings?limit=100')).data.find((l) => l.last_price !== null);
      if (!checked) await delay(500);
    }
    assert.ok(checked, 'a listing was checked');
    assert.equal(checked.last_currency, 'EUR');
    const page = await (await fetch(String(checked.url))).text();
    assert.match(page, new RegExp(`"price":"${Number(checked.last_price).toFixed(2)}"`));
  });

  it('opens its own shop to outbound requests and nothing else on this machine, for any key', async () => {
    const key = await keyOf(server!);
    const post = (path: string, body?: unknown) =>
      fetch(`${server!.url}/api/v1${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const apiPort = new URL(server!.url).port;
    // A webhook to another local service (here the API itself) is refused; one to the shop is not.
    const refused = await post('/webhooks', { url: `http://127.0.0.1:${apiPort}/api/v1/products` });
    assert.equal(refused.status, 422, await refused.clone().text());
    assert.match(JSON.stringify(await refused.json()), /loopback/);
    for (const url of [
      `http://localhost:${shopPort}/hook`,
      `http://[::1]:${shopPort}/hook`,
      `http://127.0.0.2:${shopPort}/hook`,
    ]) {
      assert.equal((await post('/webhooks', { url })).status, 422, url);
    }
    assert.equal((await post('/webhooks', { url: `http://127.0.0.1:${shopPort}/hook` })).status, 201);
    // A listing on another local port is refused when it is made, as a webhook is (nothing stored);
    // one on the shop is not. (Refusal at check time, for names that resolve to such addresses,
    // is test/fetcher/ssrf.test.ts's and address-guard.test.ts's blocked_address cases.)
    const [product] = (await api(server!, key, '/products?limit=1')).data;
    const [competitor] = (await api(server!, key, '/competitors?limit=1')).data;
    const listingsBefore = (await api(server!, key, '/listings?limit=100')).data.length;
    const listing = (url: string) =>
      post('/listings', { product_id: product!.id, competitor_id: competitor!.id, url, enabled: false });
    const local = await listing(`http://127.0.0.1:${apiPort}/readyz`);
    assert.equal(local.status, 422, await local.clone().text());
    assert.match(JSON.stringify(await local.json()), /loopback/);
    assert.equal((await api(server!, key, '/listings?limit=100')).data.length, listingsBefore);
    const shop = await listing(`http://127.0.0.1:${shopPort}/p/elsewhere`);
    assert.equal(shop.status, 201, await shop.clone().text());
  });

  it('run again: keeps the data, prints a new key for the same account', async () => {
    const firstKey = await keyOf(server!);
    const before = (await api(server!, firstKey, '/products?limit=100')).data.map((p) => p.id);
    await server!.stop('SIGTERM');
    server = await spawnServer(storage.env, args());
    const key = await keyOf(server);
    assert.notEqual(key, firstKey);
    const products = (await api(server, key, '/products?limit=100')).data.map((p) => p.id);
    assert.deepEqual(products.sort(), before.sort());
    assert.equal((await api(server, key, '/competitors?limit=100')).data.length, 4);
  });
});
