/**
 * Competitors in bulk in Chromium against a real server (test/browser/support.ts): a CSV of
 * listings pasted into the import on the Competitors & listings page, with its error table; and
 * adding one listing from a product's page, where the product is already chosen (its name shown,
 * nothing to paste). Screenshots at 1400 and 390 px. The listings' pages are on 127.0.0.1:9, so
 * the worker's checks of them never leave the machine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';
import type { Listing } from '../helpers/api-types.js';

const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('main[aria-busy], main [aria-busy=true]'));

describe('listings in bulk and from a product page, in a browser', { skip: skipReason, timeout: 300_000 }, () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
  });
  after(async () => {
    await rig?.close();
  });

  const listingsOf = async (productId: string) =>
    (await rig.call<{ data: Listing[] }>('GET', `/api/v1/products/${productId}/listings?limit=100`)).body.data;

  it('imports pasted CSV rows, shows the rows refused in a table, at 1400 and 390 px', async () => {
    const products = await rig.call<{ data: { status: number; product: { id: string } }[] }>(
      'POST',
      '/api/v1/products/batch',
      {
        products: [
          { name: 'Kettle', sku: 'KT-1', base_price: 39.99, currency: 'EUR' },
          { name: 'Toaster', sku: 'TS-2', base_price: 29.99, currency: 'EUR' },
        ],
      },
    );
    const [kettle, toaster] = products.body.data.map((d) => d.product.id);
    const rival = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Rival', website: 'http://127.0.0.1:9/' })
    ).body;

    const { page, dialogs, errors, failed } = await newPage(rig);
    await page.setViewportSize({ width: 1400, height: 900 });
    await signIn(page, rig.base, rig.key);
    await page.getByRole('link', { name: 'Competitors & listings', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Competitors & listings' }).waitFor();
    await page.getByRole('button', { name: 'Import listings (CSV)' }).click();
    const form = page.getByRole('form', { name: 'Import listings from CSV' });
    await form
      .getByLabel('Or paste the CSV')
      .fill(
        [
          'sku,url,competitor',
          'KT-1,http://127.0.0.1:9/kettle,rival',
          'TS-2,http://127.0.0.1:9/toaster,',
          'NOPE,http://127.0.0.1:9/n,',
          'KT-1,http://10.0.0.1/kettle,',
        ].join('\n'),
      );
    await form.getByRole('button', { name: 'Import' }).click();
    const status = page.getByTestId('listing-import-status');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=listing-import-status]')?.textContent?.startsWith('Done'),
    );
    assert.equal(await status.textContent(), 'Done: 4 of 4 rows, 2 created, 0 already there, 2 with errors.');
    const refused = page.getByTestId('listing-import-errors').getByRole('row');
    assert.equal(await refused.count(), 3, 'a header and two rows');
    assert.match((await refused.nth(1).textContent()) ?? '', /^4NOPE.*sku.*not the SKU of a product/);
    assert.match((await refused.nth(2).textContent()) ?? '', /^5KT-1.*url.*private network address/);
    await page
      .getByTestId('listing-import-errors')
      .getByRole('link', { name: 'Download these errors as CSV' })
      .waitFor();
    await shot(page, 'listings-import-1400');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'listings-import-390');

    // What the API holds: the named competitor, and the one of the page's domain (Rival's too).
    assert.deepEqual(
      (await listingsOf(kettle!)).map((l) => [l.url, l.competitor_id]),
      [['http://127.0.0.1:9/kettle', rival.id]],
    );
    assert.deepEqual(
      (await listingsOf(toaster!)).map((l) => [l.url, l.competitor_id]),
      [['http://127.0.0.1:9/toaster', rival.id]],
    );

    // Importing the same rows again creates nothing twice.
    await form.getByRole('button', { name: 'Import' }).click();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=listing-import-status]')?.textContent?.includes('2 already there'),
    );
    assert.equal((await listingsOf(kettle!)).length, 1);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });

  it('adds a listing from a product page with the product already chosen', async () => {
    const product = (
      await rig.call<{ id: string; name: string }>('POST', '/api/v1/products', {
        name: 'Blender Pro',
        sku: 'BL-3',
        base_price: 89,
        currency: 'EUR',
      })
    ).body;
    const shop = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', {
        name: 'Blend Shop',
        website: 'http://127.0.0.1:9/',
      })
    ).body;
    const { page, errors, failed } = await newPage(rig);
    await page.setViewportSize({ width: 1400, height: 900 });
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products/${product.id}`);
    await page.getByRole('heading', { level: 1, name: 'Blender Pro' }).waitFor();
    const form = page.getByRole('form', { name: 'Add a listing' });
    await form.waitFor();
    assert.equal(await form.getByTestId('listing-product').textContent(), 'Blender Pro');
    assert.equal(await form.locator('input[name=product_id]').getAttribute('type'), 'hidden', 'no id to paste');
    assert.equal(await form.locator('input[name=product_id]').getAttribute('value'), product.id);
    await form.getByLabel('Where').selectOption({ label: 'Blend Shop' });
    await form.getByLabel(/^Page address/).fill('http://127.0.0.1:9/blender');
    await form.getByRole('button', { name: 'Add listing' }).click();
    // The product's listings show it once the API has it.
    await page
      .getByRole('cell', { name: 'http://127.0.0.1:9/blender' })
      .or(page.getByRole('link', { name: /127\.0\.0\.1:9\/blender/ }))
      .first()
      .waitFor();
    await settled(page);
    assert.deepEqual(
      (await listingsOf(product.id)).map((l) => [l.url, l.competitor_id]),
      [['http://127.0.0.1:9/blender', shop.id]],
    );
    await shot(page, 'product-add-listing-1400');

    // The listings of one product (from "Manage these listings"): the same, by name.
    await page.goto(`${rig.base}/dashboard/#/listings?product_id=${product.id}`);
    await page.getByRole('heading', { level: 1, name: 'Competitors & listings' }).waitFor();
    const there = page.getByRole('form', { name: 'Add a listing' });
    await there.waitFor();
    assert.equal(await there.getByTestId('listing-product').textContent(), 'Blender Pro');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'listings-for-product-390');
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });
});
