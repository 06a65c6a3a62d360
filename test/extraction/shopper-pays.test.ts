import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Candidate, extractPrices } from '../../src/extraction/index.js';
import { aboutStores, availabilityFromText, buttonLabelKind } from '../../src/extraction/availability.js';
import { page } from './helpers/fixtures.js';

/**
 * Issue 23: the price the shopper pays and the stock state the page shows, one class per
 * fixture page (test/fixtures/pages/pay-*.html, stock-*.html). visible.test.ts checks each
 * page's price, currency and stock against visible-truth.json; these check why.
 */

const read = (file: string) => extractPrices(page(file));
const find = (cs: Candidate[], price: string, source?: string): Candidate | undefined =>
  cs.find((c) => c.price === price && (source === undefined || c.source === source));

describe('the price the shopper pays', () => {
  it('takes the consumer price where the page shows it with and without VAT', () => {
    const r = read('pay-vat-both-sk.html');
    assert.equal(r.chosen?.price, '5263.20');
    assert.equal(find(r.candidates, '4386.00')?.ignored, 'the price without VAT');
  });

  it('overrules structured data that gives the price without VAT the page shows beside the consumer price', () => {
    const r = read('pay-vat-jsonld-net-gb.html');
    assert.deepEqual([r.chosen?.price, r.chosen?.source], ['298.80', 'visible']);
    assert.match(
      find(r.candidates, '249.00', 'json-ld')?.ignored ?? '',
      /without VAT beside the consumer price 298\.80/,
    );
  });

  it('takes the current price over UVP, "statt" and the price per kg', () => {
    const r = read('pay-sale-uvp-unit-de.html');
    assert.equal(r.chosen?.price, '24.99');
    for (const old of ['34.99', '29.99']) assert.match(find(r.candidates, old)?.ignored ?? '', /old/);
  });

  it('reads a price split over elements as one number, and its evidence pins it', () => {
    const r = read('pay-split-cents.html');
    assert.equal(r.chosen?.price, '229.99');
    assert.ok(!r.candidates.some((c) => c.price === '22999'));
    const pinned = extractPrices(page('pay-split-cents.html'), {
      selector: r.chosen?.evidence?.path ?? '',
      visibleFallback: false,
    });
    assert.equal(pinned.chosen?.price, '229.99');
  });

  it('joins a number and its currency set in sibling elements, and pins the element holding both', () => {
    const r = read('pay-split-number-currency-ru.html');
    assert.deepEqual([r.chosen?.price, r.chosen?.currency], ['1249', 'RUB']);
    assert.equal(r.chosen?.raw, '1 249 ₽');
    const pinned = extractPrices(page('pay-split-number-currency-ru.html'), {
      selector: r.chosen?.evidence?.path ?? '',
      visibleFallback: false,
    });
    assert.deepEqual([pinned.chosen?.price, pinned.chosen?.currency], ['1249', 'RUB']);
  });

  it("records an auction's current bid, which meta tags and the page agree on, over JSON-LD's starting price", () => {
    const r = read('pay-auction-current-bid.html');
    assert.deepEqual([r.chosen?.price, r.chosen?.source], ['200', 'meta']);
    assert.match(find(r.candidates, '150', 'json-ld')?.ignored ?? '', /the page shows 200, as meta says/);
    assert.ok(
      r.notes.some((n) => /structured prices disagree: json-ld says 150, meta says 200/.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(
      !r.candidates.some((c) => (c.price === '300' || c.price === '500') && !c.ignored),
      'the estimate is never a price',
    );
  });

  it('refuses an auction that shows only its estimate and starting price', () => {
    const r = read('pay-auction-estimate-only-de.html');
    assert.equal(r.chosen, undefined);
    assert.ok(!r.candidates.some((c) => ['1200', '1800'].includes(c.price) && !c.ignored));
    assert.match(r.failure ?? '', /set a CSS selector for the price$/);
  });

  it("takes the product's own price, not a subscription's, a bundle's or an accessory's", () => {
    const r = read('pay-bundle-subscription-accessory.html');
    assert.equal(r.chosen?.price, '49.00');
    for (const other of ['44.10', '79.00', '9.99', '24.99'])
      assert.ok(find(r.candidates, other)?.ignored ?? !find(r.candidates, other), other);
  });

  it('prefers the visible sale price to the microdata of the struck one (18 vs 17.10)', () => {
    const r = read('pay-microdata-vs-visible-sale-it.html');
    assert.deepEqual([r.chosen?.price, r.chosen?.source], ['17.10', 'microdata']);
    assert.ok(find(r.candidates, '18.00', 'microdata')?.ignored);
  });

  it('does not refuse a price that stands out in the product block for a second price in the side column', () => {
    const r = read('pay-main-block-second-price-nl.html');
    assert.equal(r.chosen?.price, '39.95');
    assert.ok((r.chosen?.confidence ?? 0) >= 0.75, String(r.chosen?.confidence));
  });

  it('takes the price, not the price per kilogram', () => {
    assert.equal(read('pay-per-unit-fr.html').chosen?.price, '2.49');
  });
});

describe('the stock state the page shows', () => {
  it('reads an enabled buy link whose hidden labels say both buy and unavailable as in stock, weakly', () => {
    const r = read('stock-buy-button-pl.html');
    assert.equal(r.availability, 'in_stock');
    assert.equal(buttonLabelKind('Dodaj do koszyka Sprawdź dostępność w sklepie Produkt niedostępny'), undefined);
  });

  it('reads "notify me" in place of the buy button as out of stock', () => {
    assert.equal(read('stock-notify-me-it.html').availability, 'out_of_stock');
  });

  it('reads "Currently unavailable." as out of stock', () => {
    const r = read('stock-currently-unavailable-en.html');
    assert.equal(r.availability, 'out_of_stock');
  });

  it('leaves messages about store pickup out', () => {
    const r = read('stock-store-pickup-only.html');
    assert.equal(r.availability, 'in_stock');
    assert.ok(!r.notes.some((n) => /the page says out of stock/.test(n)), r.notes.join('\n'));
  });

  it('reads "En Stock" in a plain paragraph, and nothing in a dialog waiting closed', () => {
    assert.equal(read('stock-plain-text-fr.html').availability, 'in_stock');
  });

  it('says unknown when the page says nothing', () => {
    assert.equal(read('stock-unknown-es.html').availability, 'unknown');
  });

  it("does not take a seller's row for the page's stock state", () => {
    const r = read('stock-seller-rows.html');
    assert.equal(r.availability, 'in_stock');
    assert.deepEqual(
      r.notes.filter((n) => /the page says/.test(n)),
      [],
    );
  });

  it('takes the in-stock size among JSON-LD descriptions of the same product, one per size', () => {
    const r = read('stock-jsonld-sizes.html');
    assert.deepEqual([r.availability, r.chosen?.availability, r.chosen?.inStock], ['in_stock', 'in_stock', true]);
  });

  it('gives the chosen price the stock state the page overruled its source with', () => {
    const r = read('v-jsonld-instock-sold-out.html');
    assert.equal(r.availability, 'out_of_stock');
    assert.deepEqual([r.chosen?.source, r.chosen?.availability, r.chosen?.inStock], ['json-ld', 'out_of_stock', false]);
  });

  it('reads stock words and button labels in the languages of the pages', () => {
    for (const [text, want] of [
      ['Na sklade', 'in_stock'],
      ['Skladem', 'in_stock'],
      ['Nicht auf Lager', 'out_of_stock'],
      ['Niedostępny', 'out_of_stock'],
      ['Esaurito', 'out_of_stock'],
      ['Нет в наличии', 'out_of_stock'],
      ['在庫あり', 'in_stock'],
      ['缺貨中', 'out_of_stock'],
      ['Status NOT SOLD', 'in_stock'],
      ['Coming soon', 'out_of_stock'],
      ['Verfügbarkeit prüfen', undefined],
    ] as const) {
      assert.equal(availabilityFromText(text), want, text);
    }
    for (const [label, want] of [
      ['Aggiungi al carrello', 'buy'],
      ['Naroči', 'buy'],
      ['Купить', 'buy'],
      ['加入購物車', 'buy'],
      ['Benachrichtigen, wenn verfügbar', 'sold_out'],
      ['Prévenez-moi', 'sold_out'],
      ['Vorbestellen', 'preorder'],
      ['Vergleichen', undefined],
    ] as const) {
      assert.equal(buttonLabelKind(label), want, label);
    }
    assert.equal(aboutStores('Unavailable for store pickup'), true);
    assert.equal(aboutStores('Out of stock'), false);
  });
});
