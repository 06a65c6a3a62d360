/**
 * Every page at 1400 and 390 px wide (issue 25, items 5 and 7): a screenshot of each kept in
 * test-artifacts/browser/ (layout-<page>-<width>.png), no horizontal overflow of the page at
 * 390 px (what is wide scrolls in its own region), no word broken inside itself at either width
 * (each word of the page's text laid out on one line, and no `overflow-wrap: anywhere` /
 * `word-break` left in the computed styles), amounts with their currency's decimals, competitors'
 * names as written in alert messages, and the failed (request id, retry) and limited (429, the
 * time it resets) states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';

const settled = (page: Page) =>
  page.waitForFunction(
    () => !document.querySelector('main[aria-busy], main [aria-busy=true], main [data-state=loading]'),
    undefined,
    { timeout: 60_000 },
  );

/**
 * Words of the page's visible text laid out on more than one line: a word broken inside itself.
 * A word is what lies between spaces; prose compounds ("keep-warm") may break after their hyphen
 * and addresses after a slash, as in print, so their parts are the words; a token with a digit
 * (a SKU "KT-1000", an amount, an id, a host "127.0.0.1:9") must stay whole.
 */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const skip = (el: Element | null): boolean =>
      !el ||
      !!el.closest(
        '.sr-only, select, option, textarea, script, style, canvas, dialog:not([open]), [hidden], .u-legend, .chart-tip',
      );
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent ?? '';
      if (!text.trim() || skip(n.parentElement)) continue;
      const re = /\S+/g;
      const words: [number, string][] = [];
      // Parts of a token at `at` split on `sep` (their offsets kept).
      const split = (at: number, token: string, sep: string): [number, string][] => {
        const parts: [number, string][] = [];
        for (const part of token.split(sep)) {
          parts.push([at, part]);
          at += part.length + sep.length;
        }
        return parts;
      };
      for (let m = re.exec(text); m; m = re.exec(text)) {
        // An address may break after a slash, as in print; each of its segments then as any word.
        for (const [at, segment] of split(m.index, m[0], '/')) {
          if (/\d/.test(segment) || !segment.includes('-')) words.push([at, segment]);
          else words.push(...split(at, segment, '-'));
        }
      }
      for (const [index, word] of words) {
        if (word.length < 2) continue;
        range.setStart(n, index);
        range.setEnd(n, index + word.length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
        const lines = new Set(rects.map((r) => Math.round(r.bottom)));
        if (lines.size > 1)
          out.push(`${word} (in ${n.parentElement!.tagName.toLowerCase()}.${n.parentElement!.className})`);
      }
    }
    return out;
  });
}

/** Elements whose computed style lets a word break anywhere. */
function breakAnywhere(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((el) => {
        const s = getComputedStyle(el);
        return (
          s.overflowWrap === 'anywhere' ||
          s.overflowWrap === 'break-word' ||
          s.wordBreak === 'break-all' ||
          s.wordBreak === 'break-word' ||
          s.hyphens === 'auto'
        );
      })
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
  );
}

/** Amounts shown with more decimals than their currency has ("€180.2292"). */
const overPrecise = (text: string) => text.match(/[€$£]\s?\d[\d,]*\.\d{3,}|\d[\d.]*,\d{3,}\s?€/g) ?? [];

describe('every page at 1400 and 390 px', { skip: skipReason, timeout: 600_000 }, () => {
  let rig: Rig;
  let productId = '';
  before(async () => {
    rig = await startRig();
    const comp = async (name: string, website: string) =>
      (await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name, website })).body.id;
    const mm = await comp('MediaMarkt Überland', 'https://mediamarkt.example');
    const ebay = await comp('eBay', 'https://ebay.example');
    const names = [
      'Acknowledgeable stainless steel electric kettle with temperature control and keep-warm function',
      'Kettle',
      'Toaster 4-slice',
    ];
    const ids: string[] = [];
    for (const [i, name] of names.entries()) {
      const r = await rig.call<{ id: string }>('POST', '/api/v1/products', {
        name,
        sku: `KT-${1000 + i}-BLACK-XL`,
        brand: 'Brandname',
        category: 'Kitchen appliances',
        base_price: 49.99,
        currency: 'EUR',
      });
      assert.equal(r.status, 201);
      ids.push(r.body.id);
    }
    productId = ids[0]!;
    // A rule that fires on the competitors' prices below: its messages name them as written.
    const rule = await rig.call('POST', '/api/v1/alerts', {
      name: 'Acknowledge undercuts',
      condition: { type: 'undercut' },
    });
    assert.equal(rule.status, 201);
    const ago = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    const obs = ids.flatMap((id, i) => [
      { product_id: id, competitor_id: null, price: 180.2292, currency: 'EUR', observed_at: ago(30) },
      { product_id: id, competitor_id: null, price: 49.99 + i, currency: 'EUR', observed_at: ago(2) },
      { product_id: id, competitor_id: mm, price: 52.5, currency: 'EUR', in_stock: true, observed_at: ago(30) },
      { product_id: id, competitor_id: mm, price: 44.9, currency: 'EUR', in_stock: true, observed_at: ago(1) },
      { product_id: id, competitor_id: ebay, price: 47.1, currency: 'EUR', in_stock: true, observed_at: ago(1) },
    ]);
    const r = await rig.call<{ created: number }>('POST', '/api/v1/prices', { observations: obs });
    assert.equal(r.body.created, obs.length);
    await rig.call('POST', '/api/v1/listings', {
      product_id: productId,
      competitor_id: mm,
      url: 'http://127.0.0.1:9/a-very-long-path/acknowledgeable-kettle-stainless-steel.html',
      enabled: false,
    });
    await rig.call('POST', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks/pricehound-receiver-endpoint',
      description: 'Acknowledgement receiver',
    });
  });
  after(async () => {
    await rig?.close();
  });

  const pages: [string, () => string, string][] = [
    ['overview', () => '#/', 'Overview'],
    ['products', () => '#/products', 'Products'],
    ['product', () => `#/products/${productId}`, 'Acknowledgeable'],
    ['listings', () => '#/listings', 'Competitors'],
    [
      'changes',
      () => `#/changes?kind=down&since=${encodeURIComponent(new Date(Date.now() - 7 * 86_400_000).toISOString())}`,
      'Prices down',
    ],
    ['alerts', () => '#/alerts', 'Alerts'],
    ['webhooks', () => '#/webhooks', 'Webhooks'],
    ['keys', () => '#/keys', 'API keys'],
  ];

  for (const width of [1400, 390]) {
    it(`each page at ${width} px: no overflow, no word broken inside itself, amounts with their decimals`, async () => {
      const { page, errors, failed } = await newPage(rig);
      await page.setViewportSize({ width, height: 900 });
      await signIn(page, rig.base, rig.key);
      const problems: string[] = [];
      for (const [name, route, heading] of pages) {
        await page.goto(`${rig.base}/dashboard/${route()}`);
        await page.getByRole('heading', { level: 1, name: new RegExp(heading) }).waitFor();
        await settled(page);
        await shot(page, `layout-${name}-${width}`);
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
        }));
        if (scrollWidth > innerWidth + 1)
          problems.push(`${name}: the page is ${scrollWidth} px wide in a ${innerWidth} px window`);
        for (const w of await brokenWords(page)) problems.push(`${name}: "${w}" broken across lines`);
        for (const e of await breakAnywhere(page)) problems.push(`${name}: ${e} may break words anywhere`);
        for (const m of overPrecise(await page.locator('main').innerText()))
          problems.push(`${name}: amount "${m}" has more decimals than its currency`);
      }
      assert.deepEqual(problems, []);
      assert.deepEqual(errors, []);
      assert.deepEqual(unexpected(failed), []);
      await page.close();
    });
  }

  it("alert messages keep the competitors' names as written and amounts with their decimals", async () => {
    const events = (await rig.call<{ data: { message: string }[] }>('GET', '/api/v1/alert-events?limit=100')).body.data;
    assert.ok(events.length > 0);
    assert.ok(
      events.some((e) =>
        /MediaMarkt Überland sells .* at \d+\.\d0 EUR, under our price of \d+\.\d{2,4} EUR\./.test(e.message),
      ),
      events.map((e) => e.message).join('\n'),
    );
    assert.ok(events.some((e) => /^eBay sells /.test(e.message)));
    const { page } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/alerts`);
    await page
      .getByTestId('alert-events')
      .getByText(/^MediaMarkt Überland sells/)
      .first()
      .waitFor();
    // The event's price column: the currency's two decimals (52.50, not 52.5).
    assert.match(await page.getByTestId('alert-events').innerText(), /€\d+\.\d0\b/);
    await page.close();
  });

  it('pick, don\'t paste: "New alert" from a product comes with it chosen; choosers search the catalogue; an unknown id is never "every product"', async () => {
    const { page, errors } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products/${productId}`);
    await page.getByTestId('new-alert').click();
    const form = page.getByRole('form', { name: 'New alert rule' });
    const productBox = form.getByRole('combobox', { name: 'Product' });
    await productBox.waitFor();
    assert.match(await productBox.inputValue(), /^Acknowledgeable stainless steel/);
    assert.equal(await form.locator('input[type=hidden][name=product_id]').inputValue(), productId);
    // Typing searches the whole catalogue (GET /products?q=); the keyboard picks.
    await productBox.fill('toast');
    await form.getByRole('option', { name: /Toaster 4-slice/ }).waitFor();
    assert.equal(await productBox.getAttribute('aria-expanded'), 'true');
    await productBox.press('ArrowDown');
    assert.match((await productBox.getAttribute('aria-activedescendant')) ?? '', /-opt-0$/);
    await productBox.press('Enter');
    assert.equal(await productBox.inputValue(), 'Toaster 4-slice');
    // Text typed but not picked is refused at the field, nothing sent.
    await productBox.fill('no such thing');
    await form.getByLabel('Name').fill('Never sent');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.getByText(/Pick one from the list/).waitFor();
    assert.equal(await productBox.getAttribute('aria-invalid'), 'true');
    const rules = (await rig.call<{ data: { name: string }[] }>('GET', '/api/v1/alerts')).body.data;
    assert.ok(!rules.some((r) => r.name === 'Never sent'));
    // An id in the address that names no product: said so, the chooser left empty.
    await page.goto(`${rig.base}/dashboard/#/alerts?product_id=prod_doesnotexist0000`);
    await page.getByTestId('product-not-found').waitFor();
    assert.equal(await page.getByRole('combobox', { name: 'Product' }).inputValue(), '');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a failed request shows its request id and "Try again", which loads the page', async () => {
    const { page } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    let fail = true;
    await page.route(/\/api\/v1\/webhooks(\?|$)/, async (route) => {
      if (!fail) return route.fallback();
      await route.fulfill({
        status: 500,
        contentType: 'application/json',
        headers: { 'x-request-id': 'req_layouttest1' },
        body: JSON.stringify({
          error: 'Internal server error',
          status: 500,
          code: 'internal_error',
          request_id: 'req_layouttest1',
        }),
      });
    });
    await page.goto(`${rig.base}/dashboard/#/webhooks`);
    const box = page.locator('[data-state=failed]');
    await box.waitFor({ timeout: 60_000 });
    assert.equal(await box.getByTestId('request-id').textContent(), 'req_layouttest1');
    fail = false;
    await box.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('Acknowledgement receiver').first().waitFor();
    assert.equal(await page.locator('[data-state=failed]').count(), 0);
    await page.close();
  });

  it('a 429 shows the limited state with the time the limit resets', async () => {
    const { page } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    const reset = Math.floor(Date.now() / 1000) + 1800;
    await page.route(/\/api\/v1\/alerts(\?|$)/, (route) =>
      route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: {
          'retry-after': '1800',
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(reset),
        },
        body: JSON.stringify({ error: 'Rate limit exceeded', retry_after: 1800, limit: 1000, remaining: 0, reset }),
      }),
    );
    await page.goto(`${rig.base}/dashboard/#/alerts`);
    const box = page.locator('[data-state=limited]');
    await box.waitFor({ timeout: 60_000 });
    const text = await box.innerText();
    const at = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' }).format(new Date(reset * 1000));
    assert.match(text, /requests for the hour are used up/);
    assert.ok(
      text.includes(
        `resets at ${await page.evaluate((r) => new Intl.DateTimeFormat(undefined, { timeStyle: 'short' }).format(new Date(r * 1000)), reset)}`,
      ),
      `${text} (${at})`,
    );
    assert.ok(await box.getByRole('button', { name: 'Try again' }).isVisible());
    await page.close();
  });
});
