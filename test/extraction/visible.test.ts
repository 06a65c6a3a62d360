import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Availability, type ExtractOptions, extractPrices } from '../../src/extraction/index.js';
import { page } from './helpers/fixtures.js';

/**
 * The visible-price finder over the fixture pages written after real shops' layouts: what a
 * shopper sees on each page, written down by hand in test/fixtures/visible-truth.json (the
 * benchmark bench/extraction-quality.ts scores against the same table).
 */
interface Truth {
  file: string;
  price?: string;
  currency?: string | null;
  stock?: Availability;
  source?: string;
  /** The finder must refuse, with a failure matching this. */
  refuse?: string;
  options?: ExtractOptions;
}

const TRUTH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/visible-truth.json');
const cases = JSON.parse(fs.readFileSync(TRUTH, 'utf8')) as Truth[];

describe('visible-price finder (test/fixtures/visible-truth.json)', () => {
  it('covers at least 40 pages', () => assert.ok(cases.length >= 40, `${cases.length} cases`));

  for (const t of cases) {
    it(`${t.file}: ${t.refuse ? `refuses (${t.refuse})` : `${t.price} ${t.currency} ${t.stock}`}`, () => {
      const html = page(t.file);
      const r = extractPrices(html, t.options);
      if (t.stock) assert.equal(r.availability, t.stock);
      if (t.refuse) {
        assert.equal(r.chosen, undefined);
        assert.match(r.failure ?? '', new RegExp(t.refuse));
        assert.match(r.failure ?? '', /set a CSS selector for the price$/);
        return;
      }
      assert.ok(r.chosen, r.failure);
      assert.equal(r.chosen.price, t.price);
      assert.equal(r.chosen.currency ?? null, t.currency);
      assert.equal(r.availability, t.stock);
      if (t.source) assert.equal(r.chosen.source, t.source);
      if (r.chosen.source === 'visible') {
        // Evidence: the CSS path, pinned as the selector, reads the same price.
        const ev = r.chosen.evidence;
        assert.ok(ev && ev.path && ev.text && ev.snippet.includes(ev.text.slice(0, 4)), JSON.stringify(ev));
        const pinned = extractPrices(html, { ...t.options, selector: ev.path, visibleFallback: false });
        assert.equal(pinned.chosen?.source, 'selector', `${ev.path}: ${pinned.failure}`);
        assert.equal(pinned.chosen?.price.replace(/\.?0+$/, ''), t.price?.replace(/\.?0+$/, ''));
        assert.ok((r.chosen.confidence ?? 0) > 0 && (r.chosen.confidence ?? 0) <= 1);
        assert.match(r.chosen.reason ?? '', /^score \d+: /);
      }
    });
  }

  it('is off with visibleFallback: false', () => {
    const r = extractPrices(page('v-bigcartel-minimal.html'), { visibleFallback: false });
    assert.equal(r.chosen, undefined);
    assert.deepEqual(r.candidates, []);
    const lagging = extractPrices(page('v-meta-lags-visible.html'), { visibleFallback: false });
    assert.equal(lagging.chosen?.source, 'meta');
    assert.equal(lagging.chosen?.price, '67.84');
  });

  it('records the disagreement when it overrules a structured price', () => {
    const r = extractPrices(page('v-uvp-struck-jsonld.html'));
    assert.equal(r.chosen?.source, 'visible');
    const ld = r.candidates.find((c) => c.source === 'json-ld');
    assert.match(ld?.ignored ?? '', /equals the old price the page shows struck through/);
    assert.match(r.notes.join('\n'), /json-ld says 149\.99, the page shows 119\.01/);
    const lag = extractPrices(page('v-meta-lags-visible.html'));
    assert.match(
      lag.candidates.find((c) => c.source === 'meta')?.ignored ?? '',
      /the page shows 71\.91 as the current price/,
    );
  });

  it('attaches the visible evidence to a structured price it confirms', () => {
    const r = extractPrices(page('v-jsonld-agrees.html'));
    assert.equal(r.chosen?.source, 'json-ld');
    assert.match(r.chosen?.evidence?.path ?? '', /span\.price/);
    assert.equal(
      r.candidates.some((c) => c.source === 'visible'),
      false,
    );
  });

  it('keeps a URL-named variant over the default variant the page shows', () => {
    const r = extractPrices(page('shopify-dawn-sale.html'), {
      baseUrl: 'https://demo.example/products/jacket?variant=40000000000002',
    });
    assert.notEqual(r.chosen?.source, 'visible');
  });

  it('says the page contradicts a structured stock state', () => {
    const r = extractPrices(page('v-jsonld-instock-sold-out.html'));
    assert.equal(r.availability, 'out_of_stock');
    assert.match(
      r.notes.join('\n'),
      /the page says out of stock \(the buy button reads "Sold out"\) although the structured data says in stock/,
    );
  });
});
