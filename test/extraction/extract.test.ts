import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractPrices, type Extraction } from '../../src/extraction/index.js';
import { page, summary } from './helpers/fixtures.js';

function chosen(r: Extraction) {
  assert.ok(r.chosen, `expected a chosen price, got failure: ${r.failure}`);
  return r.chosen;
}

const html = (head: string, body: string): string =>
  `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>${head}</head><body>${body}</body></html>`;
const ld = (data: unknown): string => `<script type="application/ld+json">${JSON.stringify(data)}</script>`;

describe('extractPrices: the listing selector', () => {
  it('wins over structured data when it yields a price, and notes the disagreement', () => {
    const r = extractPrices(page('selector-member-price.html'), { selector: '.member-price .amount' });
    const c = chosen(r);
    assert.equal(c.source, 'selector');
    assert.equal(c.price, '44.99');
    assert.equal(c.currency, 'USD');
    assert.equal(c.raw, '$44.99');
    assert.match(r.notes.join('\n'), /json-ld says 49\.99/);
    assert.equal(r.availability, 'in_stock');
  });

  it('falls back to structured data when it matches nothing, and says so', () => {
    const r = extractPrices(page('selector-member-price.html'), { selector: '.price-now' });
    assert.equal(chosen(r).source, 'json-ld');
    assert.equal(chosen(r).price, '49.99');
    assert.match(r.notes.join('\n'), /the selector "\.price-now" matched no element; used the json-ld price instead/);
  });

  it('fails with the selector problem when nothing else has a price', () => {
    const r = extractPrices(page('de-de-visible-only.html'), { selector: '.hinweis', visibleFallback: false });
    assert.equal(r.chosen, undefined);
    assert.match(r.failure ?? '', /^the selector "\.hinweis" matched an element without a readable price/);
    assert.match(r.failure ?? '', /check the selector$/);
  });

  it('reports an invalid selector instead of throwing', () => {
    const r = extractPrices(page('de-de-visible-only.html'), { selector: 'div[', visibleFallback: false });
    assert.equal(r.chosen, undefined);
    assert.match(r.failure ?? '', /the selector "div\[" is not valid CSS/);
  });

  it('uses the first readable match and lists the others as ignored', () => {
    const r = extractPrices(page('de-de-visible-only.html'), { selector: '.preis' });
    assert.deepEqual(r.candidates.map(summary), [
      'selector 29.95 EUR',
      'selector 49.00 EUR ignored',
      'selector 12.99 EUR ignored',
    ]);
    assert.equal(r.candidates[0]?.detail, '.preis match 1 of 3 (text)');
  });

  it('reads a meta element through its content attribute', () => {
    const r = extractPrices(page('og-meta-pl.html'), { selector: 'meta[property="product:price:amount"]' });
    assert.equal(chosen(r).source, 'selector');
    assert.equal(chosen(r).price, '59.90');
    assert.equal(chosen(r).currency, 'PLN', 'currency from the page when the text has none');
  });

  it('leaves struck-through prices and screen-reader labels out of the text', () => {
    const r = extractPrices(page('woocommerce-sale.html'), { selector: '.summary .price' });
    assert.equal(chosen(r).price, '15.00');
    assert.equal(chosen(r).raw, '£15.00');
  });

  it('joins superscript cents', () => {
    assert.equal(chosen(extractPrices(page('sup-cents.html'), { selector: '.price-display' })).price, '329.99');
  });

  it('joins cents set in a span of their own, as the scanner does', () => {
    const html =
      '<html><body><div class="p">$229<span class="cents">99</span></div><div class="q">1.299<span>99</span> €</div></body></html>';
    assert.equal(chosen(extractPrices(html, { selector: '.p' })).price, '229.99');
    assert.equal(chosen(extractPrices(html, { selector: '.q' })).price, '1299.99');
  });

  it('reads the current price of a was/now text', () => {
    const c = chosen(extractPrices(page('was-now-text.html'), { selector: '.price-box' }));
    assert.equal(c.price, '15.00');
    assert.equal(c.raw, 'Was $20.00 Now $15.00');
  });
});

describe('extractPrices: JSON-LD', () => {
  it('prefers the first in-stock offer and says where it came from', () => {
    const r = extractPrices(page('jsonld-multiple-offers.html'));
    const c = chosen(r);
    assert.equal(c.price, '69.00');
    assert.equal(c.detail, 'JSON-LD #1 $[1].offers[1].price (Product "Merino Crew Jumper")');
    assert.equal(c.inStock, true);
    assert.equal(r.candidates.at(-1)?.availability, 'out_of_stock');
  });

  it('follows @graph and @id references, keeping the number exact', () => {
    const c = chosen(extractPrices(page('jsonld-graph.html')));
    assert.equal(c.price, '1299.9');
    assert.equal(c.currency, 'EUR');
    assert.match(c.detail, /\$\["@graph"\]\[4\]\.offers\.price/);
  });

  it('reads an AggregateOffer lowPrice as the low end of a range', () => {
    const r = extractPrices(page('jsonld-aggregate-offer.html'));
    const c = chosen(r);
    assert.equal(c.price, '89.00');
    assert.deepEqual(c.range, { low: '89.00', high: '129.00' });
    assert.match(c.detail, /\$\.offers\.lowPrice/);
    assert.match(r.notes.join('\n'), /low end of a range/);
  });

  it('prefers an in-stock single offer over the AggregateOffer lowPrice', () => {
    const r = extractPrices(page('jsonld-aggregate-nested-offers.html'));
    assert.equal(chosen(r).price, '299.95');
    assert.equal(r.candidates.find((c) => c.detail.includes('lowPrice'))?.price, '279');
  });

  it('ignores strikethrough, list and unit prices with a reason', () => {
    const spec = extractPrices(page('jsonld-price-specification.html'));
    assert.equal(chosen(spec).price, '17.9');
    assert.deepEqual(
      spec.candidates.map((c) => c.ignored),
      [
        undefined,
        'a list/strikethrough price, not the current price',
        'a unit price (per reference quantity), not the item price',
      ],
    );
    const list = extractPrices(page('jsonld-sale-list-price.html'));
    assert.equal(chosen(list).price, '79');
    assert.equal(list.candidates[1]?.ignored, 'the list price; the offer has a current price');
  });

  it('uses a ListPrice when the offer has no other price', () => {
    const r = extractPrices(
      html(
        ld({
          '@type': 'Product',
          name: 'P',
          offers: {
            '@type': 'Offer',
            priceCurrency: 'EUR',
            priceSpecification: { priceType: 'https://schema.org/ListPrice', price: '12.50' },
          },
        }),
        '',
      ),
    );
    assert.equal(chosen(r).price, '12.50');
  });

  it('lists other products (ItemList, isRelatedTo) but never chooses them', () => {
    const r = extractPrices(page('jsonld-related-products.html'));
    assert.equal(chosen(r).price, '44.95');
    assert.deepEqual(
      r.candidates.filter((c) => c.ignored).map((c) => c.ignored),
      [
        'another product\'s price ("Skillet Handle Cover")',
        'another product\'s price ("Cast Iron Conditioner")',
        'another product\'s price ("Cast Iron Skillet 10\\"")',
      ],
    );
  });

  it('picks the product whose url is the page URL', () => {
    const two = html(
      ld([
        { '@type': 'Product', name: 'A', url: 'https://s.example/a', offers: { price: '1.00', priceCurrency: 'EUR' } },
        { '@type': 'Product', name: 'B', url: 'https://s.example/b', offers: { price: '2.00', priceCurrency: 'EUR' } },
      ]),
      '',
    );
    assert.equal(chosen(extractPrices(two)).price, '1.00');
    assert.equal(chosen(extractPrices(two, { baseUrl: 'https://www.s.example/b?utm_source=x' })).price, '2.00');
  });

  it('treats a second description of the same product as the same product', () => {
    const r = extractPrices(
      html(
        ld({
          '@type': 'Product',
          name: 'Kettle',
          sku: 'K1',
          offers: { price: '30.00', priceCurrency: 'EUR', availability: 'https://schema.org/OutOfStock' },
        }) +
          ld({
            '@type': 'Product',
            name: 'Kettle (shop plugin)',
            sku: 'K1',
            offers: { price: '30.00', priceCurrency: 'EUR' },
          }),
        '',
      ),
    );
    assert.deepEqual(r.candidates.map(summary), ['json-ld 30.00 EUR', 'json-ld 30.00 EUR']);
    assert.equal(r.availability, 'out_of_stock');
  });

  it('fails on a category page rather than taking one of its products', () => {
    const r = extractPrices(page('category-itemlist.html'), { visibleFallback: false });
    assert.equal(r.chosen, undefined);
    const seen = extractPrices(page('category-itemlist.html'));
    assert.equal(seen.chosen, undefined, 'the visible cards are a list of products too');
    assert.match(seen.failure ?? '', /prices in the same place of repeated blocks: a list of products/);
    assert.equal(
      r.failure,
      "no price for this page's product: found 3 prices, none usable: 3 × another product's price (JSON-LD lists products (ItemList) but describes no single product); set a CSS selector for the price",
    );
  });

  it('survives malformed blocks: repairs what is safe, reports the rest', () => {
    const r = extractPrices(page('jsonld-malformed.html'));
    assert.equal(chosen(r).price, '149.95');
    assert.equal(chosen(r).currency, 'AUD');
    assert.match(r.notes[0] ?? '', /^JSON-LD block #1 is not valid JSON and was ignored/);
    const fallback = extractPrices(page('jsonld-malformed-meta-fallback.html'));
    assert.equal(chosen(fallback).source, 'meta');
    assert.equal(chosen(fallback).price, '349.00');
  });

  it('refuses a zero price and says why', () => {
    const r = extractPrices(page('jsonld-zero-placeholder.html'));
    assert.equal(r.chosen, undefined);
    assert.match(r.failure ?? '', /zero price, usually a placeholder/);
    assert.equal(r.availability, 'in_stock');
  });

  it('says a product without offers has no price', () => {
    const r = extractPrices(page('jsonld-no-offers.html'), { visibleFallback: false });
    assert.equal(
      r.failure,
      'no price found: JSON-LD Product "Industrie-Kompressor K900" has no offers, no itemprop=price, no price meta tags, no known shop platform markup; set a CSS selector for the price',
    );
  });

  it('picks the variant the page URL names and marks the others', () => {
    const r = extractPrices(page('jsonld-productgroup-variants.html'), {
      baseUrl: 'https://summit.example/products/trail-running-shoe?variant=9003',
    });
    assert.equal(chosen(r).price, '124.99');
    assert.equal(r.candidates[1]?.ignored, 'another variant; the page URL names variant 9003');
    assert.equal(
      chosen(extractPrices(page('jsonld-productgroup-variants.html'))).price,
      '119.99',
      'first in stock without a variant',
    );
  });

  it('reads price strings in shop formats and numbers exactly', () => {
    assert.equal(chosen(extractPrices(page('fr-fr-jsonld-string.html'))).price, '1299.00');
    assert.equal(chosen(extractPrices(page('ja-jp-jsonld.html'))).price, '3980');
    const n = extractPrices(html(ld({ '@type': 'Product', offers: { price: 19.99, priceCurrency: 'USD' } }), ''));
    assert.equal(chosen(n).price, '19.99');
  });

  it('refuses a float artefact rather than rounding it', () => {
    const r = extractPrices(html(ld({ '@type': 'Product', offers: { price: 0.1 + 0.2, priceCurrency: 'USD' } }), ''));
    assert.equal(r.chosen, undefined);
    assert.match(r.notes.join('\n'), /0\.30000000000000004 has more than 4 decimal places/);
  });
});

describe('extractPrices: microdata, RDFa and meta tags', () => {
  it('reads microdata content before text and ignores other products', () => {
    const r = extractPrices(page('microdata-de-de.html'));
    const c = chosen(r);
    assert.equal(c.price, '1299.00');
    assert.equal(c.raw, '1299.00');
    assert.equal(c.detail, 'itemprop="price" content in Offer (Product "Akku-Staubsauger Turbo 9")');
    assert.equal(r.candidates[1]?.ignored, 'another product\'s price ("Ersatzfilter 2er-Pack")');
  });

  it('reads microdata text with the locale rules (pt-BR, pl-PL with narrow NBSP)', () => {
    const br = chosen(extractPrices(page('microdata-pt-br.html')));
    assert.deepEqual([br.price, br.currency, br.raw], ['260.00', 'BRL', 'R$ 260,00']);
    const pl = extractPrices(page('microdata-pl-pl.html'));
    assert.deepEqual([chosen(pl).price, chosen(pl).currency], ['1299.00', 'PLN']);
    assert.equal(pl.availability, 'out_of_stock');
  });

  it('needs a hint for kr, and the currency override gives it', () => {
    const r = extractPrices(page('microdata-kr-ambiguous.html'));
    assert.equal(chosen(r).currency, undefined);
    assert.match(r.notes.join('\n'), /no currency found on the page/);
    const o = extractPrices(page('microdata-kr-ambiguous.html'), { currencyOverride: 'sek' });
    assert.equal(chosen(o).currency, 'SEK');
  });

  it('reads RDFa as its own source', () => {
    const c = chosen(extractPrices(page('rdfa-fr-fr.html')));
    assert.deepEqual([c.source, c.price, c.currency], ['rdfa', '189.90', 'EUR']);
  });

  it('takes a meta sale price over the regular one and ignores the original price', () => {
    const r = extractPrices(page('og-sale-price.html'));
    assert.equal(chosen(r).price, '45.50');
    assert.equal(chosen(r).detail, 'meta product:sale_price:amount');
    assert.equal(r.candidates.at(-1)?.ignored, 'the original (list) price');
    assert.equal(r.availability, 'out_of_stock');
  });

  it('only trusts prices outside any product when they agree', () => {
    const agree = html('', '<span itemprop="price" content="5.00"></span><span itemprop="price" content="5.0"></span>');
    assert.equal(chosen(extractPrices(agree)).price, '5.00');
    const differ = html(
      '',
      '<span itemprop="price" content="5.00"></span><span itemprop="price" content="7.00"></span>',
    );
    assert.equal(extractPrices(differ).chosen, undefined);
  });

  it('prefers structured sources in the documented order and notes disagreement', () => {
    const r = extractPrices(page('sources-disagree.html'));
    assert.equal(chosen(r).source, 'json-ld');
    assert.equal(chosen(r).price, '19.99');
    assert.match(r.notes.join('\n'), /sources disagree: chose 19\.99 from json-ld, but meta says 17\.99/);
  });
});

describe('extractPrices: shop platforms', () => {
  it('Shopify: product JSON in cents, compare-at and other variants listed as ignored', () => {
    const r = extractPrices(page('shopify-dawn-sale.html'));
    const c = chosen(r);
    assert.deepEqual([c.source, c.price, c.currency, c.raw], ['platform:shopify', '159.00', 'USD', '15900']);
    assert.match(c.detail, /variants\[0\]\.price \(variant 41001 "Olive", in cents\)/);
    const ignored = r.candidates.filter((x) => x.ignored).map((x) => x.ignored);
    assert.ok(ignored.includes('the compare-at (list) price'));
    assert.ok(ignored.includes('another variant; add ?variant=41003 to the listing URL to track it'));
    assert.ok(
      r.candidates.some((x) => x.detail === 'main product .price--on-sale .price-item--sale' && x.price === '159.00'),
    );
  });

  it('Shopify: the URL variant wins', () => {
    const r = extractPrices(page('shopify-dawn-sale.html'), {
      baseUrl: 'https://harbor-supply.example/products/canvas-weekender-bag?variant=41003',
    });
    assert.equal(chosen(r).price, '179.00');
  });

  it('Shopify: analytics meta only, shop currency CAD', () => {
    const c = chosen(extractPrices(page('shopify-debut-meta-cad.html')));
    assert.deepEqual([c.price, c.currency], ['1299.00', 'CAD']);
    assert.match(c.detail, /^ShopifyAnalytics meta/);
  });

  it('Shopify: sold out from the variant', () => {
    const r = extractPrices(page('shopify-sold-out.html'));
    assert.equal(r.availability, 'out_of_stock');
    assert.equal(chosen(r).inStock, false);
  });

  it('WooCommerce: sale price without the struck regular price, range and stock', () => {
    const sale = extractPrices(page('woocommerce-sale.html'));
    assert.deepEqual([chosen(sale).price, chosen(sale).currency, chosen(sale).raw], ['15.00', 'GBP', '£15.00']);
    assert.equal(sale.availability, 'in_stock');
    const variable = extractPrices(page('woocommerce-variable-out-of-stock.html'));
    assert.deepEqual(chosen(variable).range, { low: '10.00', high: '20.00' });
    assert.equal(variable.availability, 'out_of_stock');
  });

  it('WooCommerce markup counts only on WooCommerce pages', () => {
    const r = extractPrices(html('', '<div class="summary"><p class="price">£15.00</p></div>'), {
      visibleFallback: false,
    });
    assert.equal(r.chosen, undefined);
  });

  it('Magento: finalPrice in the product block, oldPrice ignored, related products left out', () => {
    const r = extractPrices(page('magento-luma.html'));
    assert.deepEqual(r.candidates.map(summary), ['platform:magento 1299 USD', 'platform:magento 1499 USD ignored']);
    assert.equal(r.availability, 'in_stock');
  });

  it('Magento: the price excluding tax is listed, not chosen', () => {
    const r = extractPrices(
      html(
        '',
        '<div class="product-info-main"><span data-price-amount="119" data-price-type="finalPrice"><span class="price">119,00 €</span></span>' +
          '<span data-price-amount="100" data-price-type="basePrice"><span class="price">100,00 €</span></span></div>',
      ),
    );
    assert.deepEqual(
      r.candidates.map((c) => [c.price, c.currency, c.ignored]),
      [
        ['119', 'EUR', undefined],
        ['100', 'EUR', 'the price excluding tax'],
      ],
    );
  });

  it('Shopify: a data-product-json script counts without other Shopify markers', () => {
    const r = extractPrices(
      html(
        '',
        '<script type="application/json" data-product-json>{"product":{"variants":[{"id":1,"price":2500,"available":true}]}}</script>',
      ),
      { currencyOverride: 'GBP' },
    );
    assert.deepEqual([chosen(r).price, chosen(r).currency, r.availability], ['25.00', 'GBP', 'in_stock']);
  });

  it('Magento: prices outside a product block are not trusted when they disagree', () => {
    const box = (n: string) =>
      `<span data-price-amount="${n}" data-price-type="finalPrice"><span class="price">$${n}.00</span></span>`;
    const r = extractPrices(
      html('', `<div class="product-item">${box('36')}</div><div class="product-item">${box('45')}</div>`),
    );
    assert.equal(r.chosen, undefined);
    assert.match(r.failure ?? '', /2 × one of several different Magento prices outside \.product-info-main/);
  });

  it('BigCommerce: BCData price with tax, RRP ignored, carousel cards left out', () => {
    const r = extractPrices(page('bigcommerce-cornerstone.html'));
    const c = chosen(r);
    assert.deepEqual(
      [c.price, c.currency, c.detail],
      ['119.99', 'USD', 'BCData.product_attributes.price.with_tax.value'],
    );
    assert.ok(!r.candidates.some((x) => x.price === '59.99' || x.price === '24.50'));
    assert.ok(r.candidates.filter((x) => x.ignored).every((x) => x.ignored === 'the recommended retail price'));
  });
});

describe('extractPrices: currency', () => {
  it("lets the currency override replace every candidate's currency and says so", () => {
    const r = extractPrices(page('jsonld-basic.html'), { currencyOverride: 'CAD' });
    assert.equal(chosen(r).currency, 'CAD');
    assert.match(r.notes.join('\n'), /the currency override CAD replaces USD found on the page/);
  });

  it('ignores an override that is not an ISO code', () => {
    const r = extractPrices(page('jsonld-basic.html'), { currencyOverride: 'dollars' });
    assert.equal(chosen(r).currency, 'USD');
    assert.match(r.notes.join('\n'), /"dollars" is not an ISO 4217 code/);
  });

  it('reads visible text with the listing locale', () => {
    const page1 = html('', '<p class="p">1,299 €</p>');
    assert.equal(chosen(extractPrices(page1, { selector: '.p' })).price, '1299');
    assert.equal(chosen(extractPrices(page1, { selector: '.p', locale: 'de-DE' })).price, '1.299');
  });

  it("reads $ in text with the page's structured currency", () => {
    const r = extractPrices(page('jsonld-malformed-meta-fallback.html'), { selector: '.money' });
    assert.deepEqual([chosen(r).price, chosen(r).currency], ['349.00', 'CAD']);
  });
});

describe('extractPrices: availability', () => {
  it('maps schema.org states', () => {
    assert.equal(extractPrices(page('jsonld-out-of-stock.html')).availability, 'out_of_stock');
    assert.equal(extractPrices(page('jsonld-preorder.html')).availability, 'preorder');
    assert.equal(extractPrices(page('fr-fr-jsonld-string.html')).availability, 'in_stock');
  });

  it('reads BackOrder as orderable but not in stock', () => {
    const r = extractPrices(
      html(
        ld({ '@type': 'Product', offers: { price: '5.00', priceCurrency: 'EUR', availability: 'schema:BackOrder' } }),
        '',
      ),
    );
    assert.equal(r.availability, 'preorder');
    assert.equal(chosen(r).inStock, false);
  });

  it('falls back to the add-to-cart button when no source states it', () => {
    const sold = html(
      '',
      '<form action="/cart/add"><button type="submit" name="add" disabled>Ausverkauft</button></form>',
    );
    assert.equal(extractPrices(sold).availability, 'out_of_stock');
    const pre = html('', '<button class="add-to-cart">Pre-order</button>');
    assert.equal(extractPrices(pre).availability, 'preorder');
    const buy = html('', '<button class="add-to-cart">Add to cart</button>');
    assert.equal(extractPrices(buy).availability, 'in_stock');
    assert.equal(extractPrices(html('', '<p>nothing</p>')).availability, 'unknown');
  });

  it('reports stock even when there is no price', () => {
    const r = extractPrices(
      html(
        '',
        '<div itemscope itemtype="https://schema.org/Product"><link itemprop="availability" href="https://schema.org/SoldOut"></div>',
      ),
    );
    assert.equal(r.chosen, undefined);
    assert.equal(r.availability, 'out_of_stock');
  });
});

describe('extractPrices: pages that are not product pages', () => {
  it('handles non-HTML responses', () => {
    assert.equal(extractPrices(page('not-html.json')).failure, 'the response is JSON, not an HTML page');
    assert.equal(
      extractPrices(page('plain-text.txt')).failure,
      'the response is plain text, not an HTML page (no markup found)',
    );
    assert.equal(extractPrices('').failure, 'the page is empty');
    assert.equal(extractPrices('%PDF-1.7\n...').failure, 'the response is a PDF document, not an HTML page');
    assert.equal(extractPrices('\u0000\u0001<html>').failure, 'the response is binary data, not an HTML page');
    assert.equal(extractPrices(undefined as unknown as string).failure, 'the page is empty');
  });

  it('never takes "the first price on the page"', () => {
    const r = extractPrices(page('de-de-visible-only.html'), { visibleFallback: false });
    assert.equal(r.chosen, undefined);
    assert.deepEqual(r.candidates, []);
    assert.equal(
      r.failure,
      'no price found: no JSON-LD, no itemprop=price, no price meta tags, no known shop platform markup; set a CSS selector for the price',
    );
    // The visible-price finder takes the marked price after the title, not the recommendations'.
    const seen = extractPrices(page('de-de-visible-only.html'));
    assert.equal(chosen(seen).source, 'visible');
    assert.equal(chosen(seen).price, '29.95');
    assert.ok(seen.candidates.every((c) => c === seen.chosen || c.ignored !== undefined));
  });

  it('copes with truncated and hostile markup', () => {
    const truncated = page('jsonld-basic.html').slice(0, 900);
    assert.doesNotThrow(() => extractPrices(truncated));
    const nested = (n: number): string =>
      html('', '<div>'.repeat(n) + '<span itemprop="price" content="3.00">3</span>' + '</div>'.repeat(n));
    assert.equal(chosen(extractPrices(nested(900))).price, '3.00');
    assert.equal(chosen(extractPrices(nested(900), { selector: 'span' })).price, '3');
    // htmlparser2 is quadratic in nesting depth (100 000 levels took 18 s): reading stops at
    // 1000 levels and says so.
    for (const options of [{}, { selector: 'span' }]) {
      const r = extractPrices(nested(100_000), options);
      assert.equal(r.chosen, undefined);
      assert.match(r.notes.join('\n'), /nests elements more than 1000 deep/);
      assert.match(r.failure ?? '', /less than 1000 deep was read\)$/);
    }
    const scriptTrap = html('', '<script>var s = "<span itemprop=\\"price\\" content=\\"9.00\\"></span>";</script>');
    assert.equal(extractPrices(scriptTrap).chosen, undefined, 'markup inside a script is not markup');
    const proto = html(
      '<script type="application/ld+json">{"@type":"Product","__proto__":{"offers":{"price":"1"}},"offers":{"price":"2.00","priceCurrency":"EUR"}}</script>',
      '',
    );
    assert.equal(chosen(extractPrices(proto)).price, '2.00');
  });

  it('finds the product on a ~150 KB page among two dozen related products', () => {
    const big = page('big-page.html');
    assert.ok(big.length > 140_000);
    const r = extractPrices(big);
    assert.deepEqual(r.candidates.map(summary), ['json-ld 1299.00 EUR']);
    assert.equal(r.availability, 'in_stock');
    const sel = extractPrices(big, { selector: '.product__price .price' });
    assert.deepEqual([chosen(sel).source, chosen(sel).price, chosen(sel).currency], ['selector', '1299.00', 'EUR']);
  });
});
