/**
 * Evidence → pin in one step (issue 13, point 5): a price the visible-price finder read shows,
 * behind the chart's point, the element it came from; one button pins that element's CSS path as
 * the listing's selector (PATCH /listings/{id}) and the next check reads the price through it.
 * Run: npm run build && TEST_CONCURRENCY=1 node scripts/run-tests.mjs test/browser/pin-selector.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';
import type { ListingCheck, Page as ApiPage } from '../helpers/api-types.js';

const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('main[aria-busy], main [aria-busy=true]'));

describe('pinning the evidence of a check as the listing selector', { skip: skipReason, timeout: 180_000 }, () => {
  let rig: Rig;
  let site: FixtureSite;
  before(async () => {
    [rig, site] = await Promise.all([startRig(), startFixtureSite()]);
  });
  after(async () => {
    await Promise.all([rig?.close(), site?.close()]);
  });

  it("one click on the chart point's evidence pins its CSS path; the next check reads the same price through it", async () => {
    const prod = (
      await rig.call<{ id: string }>('POST', '/api/v1/products', {
        name: 'Merino hiking socks',
        base_price: 25,
        currency: 'USD',
      })
    ).body;
    const shop = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Sockshop', website: site.url })
    ).body;
    // The page has no structured price and a cart drawer with other prices before the product:
    // only the visible-price finder reads it. The listing is disabled so the worker leaves it to us.
    const listing = (
      await rig.call<{ id: string; selector: string | null }>('POST', '/api/v1/listings', {
        product_id: prod.id,
        competitor_id: shop.id,
        url: `${site.url}/pages/v-cart-drawer-first.html`,
        enabled: false,
      })
    ).body;
    assert.equal(listing.selector, null);
    const first = await rig.call<ListingCheck>('POST', `/api/v1/listings/${listing.id}/check`);
    assert.deepEqual([first.body.ok, first.body.price, first.body.source], [true, 24, 'visible']);
    const evidence = first.body.candidates.find((c) => c.chosen)?.evidence;
    assert.ok(evidence, 'the chosen visible price carries its evidence');
    assert.match(evidence.path, /price/);

    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/products/${prod.id}?range=7d`);
    await page.locator('[data-chart=price][data-points="1"][data-drawn]').waitFor();
    await settled(page);
    // Keyboard: focus the chart, Enter shows the evidence of the point under the cursor (the only one).
    const chart = page.locator('[data-chart=price]');
    await chart.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    const path = page.getByTestId('evidence-path');
    await path.waitFor();
    assert.equal(await path.textContent(), evidence.path);
    assert.match((await page.getByTestId('evidence-element').textContent()) ?? '', /Its text: \$24\.00/);
    assert.match((await page.getByTestId('evidence-snippet').textContent()) ?? '', /Merino hiking socks/);

    await page.getByTestId('evidence-element').getByRole('button', { name: 'Pin as the price selector' }).click();
    const pinned = page.getByTestId('pinned-selector');
    await pinned.waitFor();
    assert.equal(await pinned.textContent(), evidence.path, 'the page shows the selector the API now holds');
    await shot(page, 'pin-selector');

    // The API holds it, and a check now reads the same price through the pinned selector.
    const after = await rig.call<{ selector: string | null }>('GET', `/api/v1/listings/${listing.id}`);
    assert.equal(after.body.selector, evidence.path);
    const second = await rig.call<ListingCheck>('POST', `/api/v1/listings/${listing.id}/check`);
    assert.deepEqual([second.body.ok, second.body.price, second.body.source], [true, 24, 'selector']);

    // The listing's check log says so too, and offers no second pin for a price the selector read.
    await page.goto(`${rig.base}/dashboard/#/listings?product_id=${prod.id}`);
    const row = page.getByRole('row').filter({ hasText: 'Sockshop' });
    await row.getByRole('button', { name: 'Check now' }).click();
    const result = page.getByTestId('check-result');
    await result.getByRole('heading', { name: /^Check of / }).waitFor();
    assert.match((await result.textContent()) ?? '', /\$24\.00, in stock \(selector\)/);
    assert.equal(await result.getByRole('button', { name: 'Pin as the price selector' }).count(), 0);

    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });

  it('a check the finder refused (two sizes, two prices) offers each price to pin; pinning one makes the next check read it', async () => {
    const prod = (
      await rig.call<{ id: string }>('POST', '/api/v1/products', { name: 'Two sizes', base_price: 50, currency: 'EUR' })
    ).body;
    const shop = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Groessenladen', website: site.url })
    ).body;
    const listing = (
      await rig.call<{ id: string }>('POST', '/api/v1/listings', {
        product_id: prod.id,
        competitor_id: shop.id,
        url: `${site.url}/pages/v-two-sizes-equal.html`,
        enabled: false,
      })
    ).body;
    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.goto(`${rig.base}/dashboard/#/listings?product_id=${prod.id}`);
    const row = page.getByRole('row').filter({ hasText: 'Groessenladen' });
    await row.getByRole('button', { name: 'Check now' }).click();
    const result = page.getByTestId('check-result');
    await result.getByRole('heading', { name: /^Check of / }).waitFor();
    assert.match((await result.textContent()) ?? '', /two visible prices are equally likely/);
    const pins = result.getByRole('button', { name: /^Pin / });
    assert.equal(await pins.count(), 2, 'one button per price the finder could not choose between');
    const refused = (await rig.call<ApiPage<ListingCheck>>('GET', `/api/v1/listings/${listing.id}/checks`)).body
      .data[0]!;
    assert.equal(refused.ok, false);
    const larger = refused.candidates.find((c) => c.price === 59);
    assert.ok(larger, JSON.stringify(refused.candidates));
    await result.getByRole('button', { name: /^Pin .*59/ }).click();
    const pinned = result.getByTestId('pinned-selector');
    await pinned.waitFor();
    assert.equal(await pinned.textContent(), larger.detail);
    const next = await rig.call<ListingCheck>('POST', `/api/v1/listings/${listing.id}/check`);
    assert.deepEqual([next.body.ok, next.body.price, next.body.source], [true, 59, 'selector']);
    await shot(page, 'pin-refused');
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });
});
