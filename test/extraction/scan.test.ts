import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { load } from 'cheerio/slim';
import type { AnyNode } from 'domhandler';
import { scanDocument, scanPage } from '../../src/extraction/scan.js';
import { PAGES_DIR, page } from './helpers/fixtures.js';

describe('page scanner', () => {
  it('reads the same from the token stream as from a parsed DOM (the selector path)', () => {
    const pages = fs.readdirSync(PAGES_DIR).filter((f) => f.endsWith('.html'));
    assert.ok(pages.length >= 30);
    for (const f of pages) {
      const html = page(f);
      assert.deepEqual(scanDocument(load(html).root()[0] as AnyNode), scanPage(html), f);
    }
  });

  it('keeps script content out of element text and decodes entities in text', () => {
    const scan = scanPage(
      '<div itemscope itemtype="https://schema.org/Offer"><span itemprop="price">&pound;1&#8239;299<script>var x = "£5";</script><style>.a{}</style></span></div>',
    );
    assert.equal(scan.props[0]?.el?.text, '£1 299', 'narrow NBSP folded to a space like all whitespace');
  });

  it("leaves struck and screen-reader text out but keeps an element's own text when it is struck", () => {
    const scan = scanPage(
      '<body class="woocommerce"><div class="summary"><p class="price"><del>£20</del> <span class="screen-reader-text">was £20</span><ins>£15</ins></p></div>' +
        '<div itemscope itemtype="https://schema.org/Offer"><s itemprop="price">£9</s></div></body>',
    );
    assert.equal(scan.wooPrices[0]?.text, '£15');
    assert.equal(scan.props[0]?.el?.text, '£9');
  });

  it('separates block elements and joins superscript cents', () => {
    const scan = scanPage(
      '<div itemscope itemtype="https://schema.org/Offer"><div itemprop="price"><div>12</div><div>99</div></div><span itemprop="lowPrice">$4<sup>99</sup></span></div>',
    );
    assert.equal(scan.props[0]?.el?.text, '12 99');
    assert.equal(scan.props[1]?.el?.text, '$4.99');
  });

  it('joins cents set in any inline element of their own, after a thousands group with the other separator', () => {
    const scan = scanPage(
      '<div itemscope itemtype="https://schema.org/Offer">' +
        '<div itemprop="price">$229<span class="cents">99</span></div>' +
        '<div itemprop="price"><span>1.299</span><span>99</span> €</div>' +
        '<div itemprop="price"><b>12,</b><b>99</b> €</div>' +
        '<div itemprop="price">12.50<span>99</span></div>' +
        '<div itemprop="price">$229<span>999</span></div></div>',
    );
    assert.deepEqual(
      scan.props.map((p) => p.el?.text),
      ['$229.99', '1.299,99 €', '12,99 €', '12.50 99', '$229999'],
    );
  });
});
