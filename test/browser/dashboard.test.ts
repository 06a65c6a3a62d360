/**
 * The dashboard in Debian's Chromium against a real server process (test/browser/support.ts):
 * sign-in, products, the price chart's data, text that looks like HTML, usage. Skipped with the
 * reason when no Chromium is found or the dashboard is not built.
 * Run: node scripts/run-tests.mjs test/browser  (npm test leaves this folder out; .ci/run runs it last)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';
import type { Product } from '../helpers/api-types.js';

/** What the page's chart holds (read from the browser), not an API answer. */
interface ChartState {
  labels: (string | undefined)[];
  data: (number | null)[][];
  points: number;
}

/** Resolves once the page has rendered everything it loads (no busy region left). */
const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('main[aria-busy], main [aria-busy=true]'));

/** The price chart's own data (uPlot's aligned arrays), as drawn. */
function chartState(page: Page): Promise<ChartState> {
  return page.evaluate(() => {
    const el = document.querySelector('[data-chart=price]') as HTMLElement & {
      uplot: { data: (number | null)[][]; series: { label?: string }[] };
    };
    return {
      labels: el.uplot.series.map((s) => s.label),
      data: el.uplot.data.map((a) => Array.from(a)),
      points: Number(el.dataset.points),
    };
  });
}

/** Moves the mouse onto point `idx` of series `s` of the price chart. */
async function hoverPoint(page: Page, s: number, idx: number): Promise<void> {
  // Parts of the page that load after the chart change the layout: measure once they are in.
  await settled(page);
  await page.locator('[data-chart=price]').scrollIntoViewIfNeeded();
  const pos = await page.evaluate(
    ([s, idx]) => {
      const el = document.querySelector('[data-chart=price]') as HTMLElement & {
        uplot: { data: (number | null)[][]; valToPos(v: number, scale: string): number; over: HTMLElement };
      };
      const u = el.uplot;
      const r = u.over.getBoundingClientRect();
      return { x: r.left + u.valToPos(u.data[0]![idx]!, 'x'), y: r.top + u.valToPos(u.data[s]![idx]!, 'y') };
    },
    [s, idx] as const,
  );
  await page.mouse.move(pos.x, pos.y);
}

describe('the dashboard in a browser', { skip: skipReason, timeout: 300_000 }, () => {
  let rig: Rig;
  let site: FixtureSite;
  before(async () => {
    [rig, site] = await Promise.all([startRig(), startFixtureSite()]);
  });
  after(async () => {
    await rig?.close();
    await site?.close();
  });

  it('signs in with a key kept in sessionStorage only, refuses a bad key, and signs out', async () => {
    const { page, dialogs, errors } = await newPage(rig);
    await page.goto(`${rig.base}/dashboard/`);
    await page.getByLabel('API key').fill('ph_live_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key is not valid, or it has been revoked.').waitFor();
    assert.equal(await page.getByLabel('API key').getAttribute('aria-invalid'), 'true');
    await shot(page, 'signin-refused');

    await page.getByLabel('API key').fill(rig.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('pricehound.apiKey'),
      local: localStorage.length,
      cookie: document.cookie,
      url: location.href,
    }));
    assert.equal(stored.session, rig.key);
    assert.equal(stored.local, 0);
    assert.equal(stored.cookie, '');
    assert.ok(!stored.url.includes(rig.key));

    // A reload keeps the tab signed in; a new tab is not.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const other = await newPage(rig);
    await other.page.goto(`${rig.base}/dashboard/`);
    await other.page.getByLabel('API key').waitFor();
    await other.page.close();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('pricehound.apiKey')), null);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("creates, edits and deletes a product, showing the API's field errors", async () => {
    const { page, dialogs, errors } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    await page.getByRole('button', { name: 'New product' }).click();
    const dialog = page.getByRole('dialog', { name: 'New product' });
    await dialog.getByLabel('Name').fill('Espresso machine');
    await dialog.getByLabel('SKU').fill('ESP-1');
    await dialog.getByLabel('Base price').fill('199.123456');
    await dialog.getByLabel('Currency').fill('eur');
    await dialog.getByRole('button', { name: 'Create product' }).click();
    // The API refuses more than 4 decimals (422); the form says so at the field.
    const price = dialog.getByLabel('Base price');
    await page.waitForFunction(
      () => document.querySelector('dialog input[name=base_price]')?.getAttribute('aria-invalid') === 'true',
    );
    assert.match(
      (await dialog.locator('.field-error').filter({ hasText: /\S/ }).first().textContent()) ?? '',
      /decimal|places|money/i,
    );
    await shot(page, 'product-form-error');
    await price.fill('199.99');
    await dialog.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { level: 1, name: 'Espresso machine' }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!.split('?')[0]!);
    const created = await rig.call<Product & { currency: string; sku: string }>('GET', `/api/v1/products/${id}`);
    assert.equal(created.status, 200);
    assert.deepEqual(
      [created.body.name, created.body.sku, created.body.base_price, created.body.currency],
      ['Espresso machine', 'ESP-1', 199.99, 'EUR'],
    );

    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: /^Edit / });
    await edit.getByLabel('Base price').fill('189.5');
    await edit.getByLabel('Brand').fill('Brewmaster');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Brewmaster').first().waitFor();
    const edited = await rig.call<Product & { brand: string }>('GET', `/api/v1/products/${id}`);
    assert.deepEqual(
      [edited.body.base_price, edited.body.brand, edited.body.name],
      [189.5, 'Brewmaster', 'Espresso machine'],
    );

    // Found by search in the list, deleted from there after our own confirmation dialog.
    await page.goto(`${rig.base}/dashboard/#/products?q=espresso`);
    const row = page.getByRole('row', { name: /Espresso machine/ });
    await row.waitFor();
    await row.getByRole('button', { name: 'Delete Espresso machine' }).click();
    const confirm = page.getByRole('dialog', { name: 'Please confirm' });
    await confirm.getByRole('button', { name: 'Delete product' }).click();
    await page.getByText('No product matches these filters.').waitFor();
    assert.equal((await rig.call('GET', `/api/v1/products/${id}`)).status, 404);
    assert.deepEqual(dialogs, [], 'no window.confirm or alert');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('shows a product named <img src=x onerror=alert(1)> as text, and never runs it', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const p = await rig.call<Product>('POST', '/api/v1/products', {
      name: evil,
      brand: '<script>alert(2)</script>',
      description: '<svg onload=alert(3)></svg>',
      base_price: 5,
      currency: 'EUR',
    });
    assert.equal(p.status, 201);
    const c = await rig.call<{ id: string }>('POST', '/api/v1/competitors', {
      name: '<b onmouseover=alert(4)>Evil shop</b>',
      website: 'https://evil.example',
    });
    assert.equal(c.status, 201);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await rig.call('POST', '/api/v1/prices', {
      observations: [
        { product_id: p.body.id, competitor_id: c.body.id, price: 4.5, currency: 'EUR', observed_at: hourAgo },
        { product_id: p.body.id, price: 5, currency: 'EUR', observed_at: hourAgo },
      ],
    });
    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products?q=${encodeURIComponent('<img')}`);
    const link = page.getByTestId('product-link').filter({ hasText: evil });
    await link.waitFor();
    assert.equal(await link.textContent(), evil);
    await link.click();
    await page.getByRole('heading', { level: 1, name: evil }).waitFor();
    await page.locator('[data-chart=price][data-drawn]').waitFor();
    await page.getByText('<b onmouseover=alert(4)>Evil shop</b>').first().waitFor();
    await page.getByText('<svg onload=alert(3)></svg>').waitFor();
    // Hovering the competitor's point shows its name as text too.
    const chart = await chartState(page);
    assert.deepEqual(chart.data.slice(1, 3), [[5], [4.5]]);
    await hoverPoint(page, 2, 0);
    await page.locator('.chart-tip.show', { hasText: '<b onmouseover=alert(4)>Evil shop</b>' }).waitFor();
    // No element was made from the text: nothing to load "x" from, no svg or script in the page.
    const made = await page.evaluate(() => ({
      imgs: document.querySelectorAll('main img').length,
      scripts: document.querySelectorAll('body script').length,
      svgs: document.querySelectorAll('main svg').length,
      bold: document.querySelectorAll('main b').length,
    }));
    assert.deepEqual(made, { imgs: 0, scripts: 0, svgs: 0, bold: 0 });
    await page.goto(`${rig.base}/dashboard/#/products`);
    await page.getByTestId('product-link').filter({ hasText: evil }).waitFor();
    await shot(page, 'xss-as-text');
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), [], 'nothing requested "x" or anything else that failed');
    await page.close();
  });

  it('draws the prices sent through POST /prices, point for point, with the lowest competitor line; a checked price shows its evidence', async () => {
    const prod = (
      await rig.call<Product>('POST', '/api/v1/products', { name: 'Water bottle', base_price: 21, currency: 'USD' })
    ).body;
    const a = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Alpha', website: 'https://alpha.example' })
    ).body;
    const b = (await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Beta', website: site.url })).body;
    const hour = 3_600_000;
    const t0 = Math.floor(Date.now() / hour) * hour - 48 * hour;
    const at = (h: number) => new Date(t0 + h * hour).toISOString();
    const sent = [
      { competitor_id: null, price: 21, h: 0 },
      { competitor_id: null, price: 20.5, h: 12 },
      { competitor_id: null, price: 20.75, h: 30 },
      { competitor_id: a.id, price: 22, h: 1 },
      { competitor_id: a.id, price: 19.25, h: 12 },
      { competitor_id: a.id, price: 19.5, h: 24, in_stock: false },
      { competitor_id: a.id, price: 23, h: 36 },
    ];
    const r = await rig.call<{ created: number }>('POST', '/api/v1/prices', {
      observations: sent.map((o) => ({
        product_id: prod.id,
        competitor_id: o.competitor_id,
        price: o.price,
        currency: 'USD',
        in_stock: o.in_stock ?? true,
        observed_at: at(o.h),
      })),
    });
    assert.equal(r.body.created, sent.length);
    // Beta's price comes from a real check of a page on 127.0.0.1 (19.99 in its JSON-LD), made
    // now (the listing is disabled, so the worker leaves it to us).
    const listing = await rig.call<{ id: string }>('POST', '/api/v1/listings', {
      product_id: prod.id,
      competitor_id: b.id,
      url: `${site.url}/pages/jsonld-basic.html`,
      enabled: false,
    });
    assert.equal(listing.status, 201);
    const check = await rig.call<{ ok: boolean; price: number }>('POST', `/api/v1/listings/${listing.body.id}/check`);
    assert.deepEqual([check.body.ok, check.body.price], [true, 19.99]);

    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products/${prod.id}?range=7d`);
    await page.locator(`[data-chart=price][data-points="${sent.length + 1}"][data-drawn]`).waitFor();
    // Trends and listings load after the chart and change the layout above nothing, but wait for
    // them so the points stay where they are measured.
    await settled(page);
    const state = await chartState(page);
    assert.deepEqual(state.labels.slice(1), ['Our price', 'Alpha', 'Beta', 'Lowest competitor']);
    const xs = state.data[0]!;
    const series = (s: number) => xs.map((x, i) => [x, state.data[s]![i]] as const).filter(([, v]) => v !== null);
    const expect = (competitor: string | null) =>
      sent.filter((o) => o.competitor_id === competitor).map((o) => [(t0 + o.h * hour) / 1000, o.price] as const);
    assert.deepEqual(series(1), expect(null));
    assert.deepEqual(series(2), expect(a.id));
    assert.equal(series(3).length, 1);
    assert.equal(series(3)[0]![1], 19.99);
    // The lowest competitor price in effect: Alpha's until Beta's check, except while Alpha was out of stock.
    const lowestAt = (h: number) => state.data[4]![xs.indexOf((t0 + h * hour) / 1000)];
    assert.equal(lowestAt(0), null, 'no competitor price yet');
    assert.equal(lowestAt(1), 22);
    assert.equal(lowestAt(12), 19.25);
    assert.equal(lowestAt(24), null, 'Alpha out of stock, Beta not seen yet');
    assert.equal(lowestAt(36), 23);
    assert.equal(state.data[4]![xs.length - 1], 19.99);

    // Hover shows the observation; a click on Beta's checked price shows where on the page it was read.
    await hoverPoint(page, 2, xs.indexOf((t0 + 12 * hour) / 1000));
    const tip = page.locator('.chart-tip.show');
    await tip.waitFor();
    assert.match((await tip.textContent()) ?? '', /Alpha.*19\.25.*sent through the API/s);
    await hoverPoint(page, 3, xs.length - 1);
    await page.locator('.chart-tip.show', { hasText: 'from a check' }).waitFor();
    await page.mouse.down();
    await page.mouse.up();
    await page.getByTestId('evidence-raw').waitFor();
    assert.equal(await page.getByTestId('evidence-raw').textContent(), '19.99');
    assert.match((await page.getByTestId('evidence-detail').textContent()) ?? '', /offers/);
    // Trends load on demand (they read the whole history): the cheapest competitor is Beta now.
    // Scrolling them near the view loads them (a click on the button would race that: the loading
    // replaces the button while the click scrolls to it).
    await page.getByTestId('trends').scrollIntoViewIfNeeded();
    await page.getByTestId('trends').getByRole('cell', { name: 'Alpha' }).waitFor();
    assert.match((await page.getByTestId('position').textContent()) ?? '', /Beta: \$19\.99/);
    await shot(page, 'product-chart');

    // Hourly buckets of the same data: one point per hour with a price.
    await page.getByRole('navigation', { name: 'Interval' }).getByRole('link', { name: 'Hourly' }).click();
    await page.locator('[data-chart=price][data-points="8"][data-drawn]').waitFor();
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });

  it("market tiles link to exactly the changes they count, our own prices and the competitors' apart", async () => {
    const { page, errors } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    const group = (series: string) => page.getByTestId(`market-7d-${series}`);
    await group('competitors').locator('a.tile').first().waitFor();
    const count = async (series: string, label: string) =>
      Number(
        (await group(series).locator('a.tile', { hasText: label }).locator('.tile-value').textContent())?.replace(
          /\D/g,
          '',
        ),
      );
    let down = 0;
    let up = 0;
    for (const series of ['competitors', 'own']) {
      down += await count(series, 'Prices down');
      up += await count(series, 'Prices up');
    }
    assert.ok(down > 0 && up > 0, `the chart test's prices moved both ways: up ${up}, down ${down}`);
    let clicked = 0;
    for (const series of ['competitors', 'own']) {
      for (const label of ['Prices down', 'Prices up']) {
        const n = await count(series, label);
        if (n === 0) continue;
        clicked++;
        await page.goto(`${rig.base}/dashboard/#/`);
        await group(series).locator('a.tile', { hasText: label }).click();
        await page
          .getByRole('heading', { level: 1, name: new RegExp(`^${label} since .*\\((our|competitors') prices\\)$`) })
          .waitFor();
        await settled(page);
        assert.equal(await page.locator('main tbody tr').count(), n, `${series} ${label}`);
        const sellers = await page.locator('main tbody td:nth-child(3)').allTextContents();
        for (const s of sellers) assert.equal(s === 'Our shop', series === 'own', `${series}: ${s}`);
        const changes = await page.locator('main tbody td:nth-child(6)').allTextContents();
        for (const c of changes) assert.match(c, label === 'Prices up' ? /^\+/ : /^−/);
        await page.goto(`${rig.base}/dashboard/#/`);
        await group('competitors').locator('a.tile').first().waitFor();
      }
    }
    assert.ok(clicked >= 2);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('checks a listing now and dry-runs an extraction, showing every candidate and the one chosen', async () => {
    const prod = (
      await rig.call<Product>('POST', '/api/v1/products', { name: 'Steel bottle', base_price: 20, currency: 'USD' })
    ).body;
    const shop = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Trailhead', website: site.url })
    ).body;
    const listing = await rig.call<{ id: string }>('POST', '/api/v1/listings', {
      product_id: prod.id,
      competitor_id: shop.id,
      url: `${site.url}/pages/jsonld-basic.html`,
      enabled: false,
    });
    assert.equal(listing.status, 201);
    const { page, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/listings?product_id=${prod.id}`);
    const row = page.getByRole('row').filter({ hasText: 'Trailhead' }).filter({ hasText: 'jsonld-basic' });
    await row.getByRole('button', { name: 'Check now' }).click();
    const result = page.getByTestId('check-result');
    await result.getByRole('heading', { name: /^Check of / }).waitFor();
    assert.match((await result.textContent()) ?? '', /\$19\.99, in stock \(json-ld\)/);
    await row.getByText('$19.99').waitFor();
    assert.equal(
      (await rig.call<{ status: string; last_price: number }>('GET', `/api/v1/listings/${listing.body.id}`)).body
        .last_price,
      19.99,
    );

    const dry = page.getByRole('form', { name: 'Dry-run extraction' });
    await dry.getByLabel(/^Page address/).fill(`${site.url}/pages/jsonld-basic.html`);
    await dry.getByRole('button', { name: 'Try it' }).click();
    const out = page.getByTestId('extract-result');
    await out.getByRole('heading', { name: 'A check would record $19.99 (in stock)' }).waitFor();
    const chosen = out.getByRole('row').filter({ has: page.getByText('chosen', { exact: true }) });
    assert.equal(await chosen.count(), 1);
    assert.match((await chosen.textContent()) ?? '', /json-ld.*offers\.price.*19\.99/s);
    await shot(page, 'listings-dry-run');
    // A private address is refused by the API (422) and said at the field.
    await dry.getByLabel(/^Page address/).fill('http://10.0.0.1/x');
    await dry.getByRole('button', { name: 'Try it' }).click();
    await page.waitForFunction(
      () =>
        document
          .querySelector('form[aria-label="Dry-run extraction"] input[name=url]')
          ?.getAttribute('aria-invalid') === 'true',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed, [/\/api\/v1\/extract$/]), []);
    await page.close();
  });

  it('shows a held reading with its reason and Accept / Reject on the listings page, at desk and phone widths', async () => {
    // A shop whose price the test sets: 49.99, then 4999 (cents lost), which a check holds.
    const prices = new Map<string, string>();
    const server = http.createServer((req, res) => {
      const price = prices.get(req.url ?? '');
      if (!price) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><title>Kettle</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Kettle",` +
            `"offers":{"@type":"Offer","price":"${price}","priceCurrency":"EUR","availability":"https://schema.org/InStock"}}</script><h1>Kettle</h1>`,
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const shopUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const shop = (
        await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Holdfast', website: shopUrl })
      ).body;
      const listings: Record<'glass' | 'steel', string> = { glass: '', steel: '' };
      for (const name of ['glass', 'steel'] as const) {
        const prod = (
          await rig.call<Product>('POST', '/api/v1/products', {
            name: `${name === 'glass' ? 'Glass' : 'Steel'} kettle`,
            base_price: 50,
            currency: 'EUR',
          })
        ).body;
        prices.set(`/${name}`, '49.99');
        const l = await rig.call<{ id: string }>('POST', '/api/v1/listings', {
          product_id: prod.id,
          competitor_id: shop.id,
          url: `${shopUrl}/${name}`,
          enabled: false,
        });
        assert.equal(l.status, 201);
        listings[name] = l.body.id;
        assert.equal(
          (await rig.call<{ outcome: string }>('POST', `/api/v1/listings/${l.body.id}/check`)).body.outcome,
          'recorded',
        );
        prices.set(`/${name}`, '4999');
        assert.equal(
          (await rig.call<{ outcome: string }>('POST', `/api/v1/listings/${l.body.id}/check`)).body.outcome,
          'held',
        );
      }

      const { page, errors, failed } = await newPage(rig);
      await page.setViewportSize({ width: 1400, height: 900 });
      await signIn(page, rig.base, rig.key);
      await page.goto(`${rig.base}/dashboard/#/listings?competitor_id=${shop.id}`);
      const panel = page.getByTestId('held-readings');
      await panel.getByRole('heading', { name: 'Held readings (2)' }).waitFor();
      const glass = panel.getByRole('listitem', { name: /^Held reading of Glass kettle/ });
      const glassText = (await glass.textContent()) ?? '';
      assert.match(glassText, /€4,999\.00 read .*last recorded €49\.99/s, 'the price read beside the last one');
      assert.match(
        glassText,
        /Why held: The price read, 4999 EUR, is 100 times the listing's last recorded price, 49\.99 EUR/,
      );
      const row = page.getByRole('row').filter({ hasText: 'steel' });
      await row.getByText('price held').waitFor();
      await settled(page);
      await shot(page, 'listings-held-1400');

      await page.setViewportSize({ width: 390, height: 844 });
      await settled(page);
      const by = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(by <= 0, `the listings page with held readings is ${by}px wider than the phone`);
      await shot(page, 'listings-held-390');
      await page.setViewportSize({ width: 1400, height: 900 });

      await glass.getByRole('button', { name: 'Accept' }).click();
      await page.getByTestId('held-answer').filter({ hasText: 'Accepted: €4,999.00 is recorded' }).waitFor();
      await panel.getByRole('heading', { name: 'Held readings (1)' }).waitFor();
      const accepted = (
        await rig.call<{ last_price: number; held: unknown }>('GET', `/api/v1/listings/${listings.glass}`)
      ).body;
      assert.deepEqual([accepted.last_price, accepted.held], [4999, null]);

      await panel
        .getByRole('listitem', { name: /^Held reading of Steel kettle/ })
        .getByRole('button', { name: 'Reject' })
        .click();
      await page.getByTestId('held-answer').filter({ hasText: 'Rejected €4,999.00: nothing was recorded' }).waitFor();
      await panel.getByRole('heading').waitFor({ state: 'detached' });
      const rejected = (
        await rig.call<{ last_price: number; held: unknown }>('GET', `/api/v1/listings/${listings.steel}`)
      ).body;
      assert.deepEqual([rejected.last_price, rejected.held], [49.99, null]);

      // The check log says what became of each held reading.
      await page.getByRole('row').filter({ hasText: 'steel' }).getByRole('button', { name: 'Check log' }).click();
      const log = page.getByTestId('check-result');
      await log.getByText(/held €4,999\.00 \(rejected\)/).waitFor();
      await log.getByText(/held €4,999\.00 \(rejected\)/).click();
      assert.match(
        (await log.getByTestId('held-check').first().textContent()) ?? '',
        /100 times.*rejected by hand: nothing was recorded/s,
      );
      assert.deepEqual(errors, []);
      assert.deepEqual(unexpected(failed, []), []);
      await page.close();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('imports products from CSV in batches with per-row errors, and exports the catalogue', async () => {
    await rig.call('POST', '/api/v1/products', { name: 'Existing', sku: 'CSV-DUP', base_price: 1, currency: 'EUR' });
    const csv = [
      'name,sku,base_price,currency,brand',
      'Imported one,CSV-1,10.50,EUR,"Brand, with comma"',
      'Imported two,CSV-2,twelve,EUR,',
      'Imported three,CSV-DUP,3,EUR,',
      '"Imported ""four""",CSV-4,4,XXX,',
      'Imported five,CSV-5,5,usd,',
      "'-20% Kettle,CSV-6,6,EUR,",
    ].join('\r\n');
    const { page, dialogs, errors } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products`);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import products' });
    await dialog
      .getByLabel('CSV file')
      .setInputFiles({ name: 'products.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('button', { name: 'Import' }).click();
    await dialog
      .getByTestId('import-status')
      .filter({ hasText: /^Done: 6 of 6 rows, 3 created, 3 with errors\./ })
      .waitFor();
    assert.equal(await dialog.locator('progress').getAttribute('value'), '6');
    const rows = (await dialog.getByTestId('import-errors').locator('tbody tr').allTextContents()).map((r) =>
      r.replace(/\s+/g, ' '),
    );
    assert.equal(rows.length, 3, rows.join('\n'));
    assert.match(rows[0]!, /^3.*Imported two.*base_price.*twelve/);
    assert.match(rows[1]!, /^4.*Imported three.*sku/i);
    assert.match(rows[2]!, /^5.*Imported "four".*currency/);
    await shot(page, 'products-import');
    // The dialog at a desktop's and a phone's width (issue 24: the import reads with the typed client's CSV reader).
    for (const width of [1400, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, `products-import-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    const one = (
      await rig.call<{ data: { name: string; brand: string; currency: string }[] }>('GET', '/api/v1/products?sku=CSV-1')
    ).body.data;
    assert.deepEqual(
      one.map((p) => [p.name, p.brand, p.currency]),
      [['Imported one', 'Brand, with comma', 'EUR']],
    );
    assert.equal((await rig.call<{ data: unknown[] }>('GET', '/api/v1/products?sku=CSV-5')).body.data.length, 1);
    // The formula guard an export puts before such a name is taken off on import.
    const kettle = (await rig.call<{ data: { name: string }[] }>('GET', '/api/v1/products?sku=CSV-6')).body.data;
    assert.deepEqual(
      kettle.map((p) => p.name),
      ['-20% Kettle'],
    );

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'products.csv');
    const exported = fs.readFileSync((await download.path())!, 'utf8');
    assert.match(exported.split('\r\n')[0]!, /^id,sku,name,brand,category,currency,base_price,/);
    assert.ok(exported.includes('Imported one') && exported.includes('"Brand, with comma"'));
    assert.ok(exported.includes(",'-20% Kettle,"), 'the export guards the name');
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("shows the key's usage after requests, with the hourly chart and the reset countdown", async () => {
    const { page, errors } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await settled(page);
    for (let i = 0; i < 7; i++) assert.equal((await rig.call('GET', '/api/v1/products?limit=1')).status, 200);
    // GET /usage is not counted, so after the page's refresh both see the same count.
    const usage = await rig.call<{ used: number; limit: number; history: { requests: number }[] }>(
      'GET',
      '/api/v1/usage?hours=2',
    );
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    const expected = `${usage.body.used.toLocaleString('en-US')} of ${usage.body.limit.toLocaleString('en-US')}`;
    await page.getByTestId('usage-used').filter({ hasText: expected }).waitFor();
    assert.equal(await page.getByTestId('usage-plan').textContent(), 'business');
    assert.match((await page.getByTestId('reset-countdown').textContent()) ?? '', /^\d{1,2}:\d{2}$/);
    const bars = await page.evaluate(() => {
      const el = document.querySelector('[data-chart=usage]') as HTMLElement & { uplot: { data: number[][] } };
      return { slots: el.uplot.data[0]!.length, current: el.uplot.data[1]![el.uplot.data[1]!.length - 1] };
    });
    assert.equal(bars.slots, 48);
    assert.ok(
      bars.current! >= 7 && bars.current === usage.body.history[0]!.requests,
      JSON.stringify({ bars, history: usage.body.history }),
    );
    assert.match(
      (await page.locator('.usage-badge').textContent()) ?? '',
      new RegExp(`^${(usage.body.limit - usage.body.used).toLocaleString('en-US')} / 100,000 left`),
    );
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('warns near the hourly limit', async () => {
    const free = await rig.newKey('free');
    // 820 of a free key's 1000: cheap requests (an unknown product is a 404, which counts too).
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 820) {
          next++;
          await fetch(`${rig.base}/api/v1/products/prod_00000000000000000000000000`, {
            headers: { authorization: `Bearer ${free}` },
          }).then((r) => r.arrayBuffer());
        }
      }),
    );
    const { page } = await newPage(rig);
    await signIn(page, rig.base, free);
    await page.getByTestId('usage-warning').waitFor();
    assert.match(
      (await page.getByTestId('usage-warning').textContent()) ?? '',
      /^8\d % of this hour's requests are used/,
    );
    assert.ok(await page.locator('.usage-badge.warn').isVisible());
    await shot(page, 'overview-near-limit');
    await page.close();
  });

  it('works at phone width: the menu wraps, tables scroll inside their region, nothing overflows the page', async () => {
    const { page } = await newPage(rig);
    await page.setViewportSize({ width: 375, height: 812 });
    await signIn(page, rig.base, rig.key);
    for (const [hash, title] of [
      ['#/', 'Overview'],
      ['#/products', 'Products'],
      ['#/listings', 'Competitors & listings'],
    ] as const) {
      await page.goto(`${rig.base}/dashboard/${hash}`);
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      await settled(page);
      const overflow = await page.evaluate(() => ({
        by: document.documentElement.scrollWidth - window.innerWidth,
        // What sticks out, outside the scrolling table regions (for the message).
        culprits: [...document.querySelectorAll('body *')]
          .filter(
            (e) => !e.parentElement?.closest('.table-wrap') && e.getBoundingClientRect().right > window.innerWidth,
          )
          .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
          .slice(0, 10),
        sizes: ['main', 'main > *', '.table-wrap', 'form.filters', 'header.top'].map(
          (q) =>
            `${q}:${[...document.querySelectorAll(q)].map((e) => Math.round(e.getBoundingClientRect().width)).join('/')}`,
        ),
      }));
      assert.ok(
        overflow.by <= 0,
        `${hash} is ${overflow.by}px wider than the phone: ${overflow.culprits.join(', ')} ${overflow.sizes.join(' ')}`,
      );
    }
    await shot(page, 'phone-listings');
    await page.close();
  });
});
