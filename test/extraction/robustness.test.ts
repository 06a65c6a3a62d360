import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { extractPrices, parsePrice, type Extraction } from '../../src/extraction/index.js';
import { PAGES_DIR, page } from './helpers/fixtures.js';

/** Deterministic pseudo-random numbers (LCG), so a failure reproduces. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const DECIMAL = /^\d+(\.\d+)?$/;
const JUNK = [
  '<',
  '>',
  '"',
  '{',
  '}',
  ',',
  '<div>',
  '</div>',
  '<script type="application/ld+json">',
  '</script>',
  '<!--',
  '&#',
  '\u0000',
  '€',
  '1.299,00',
  'itemprop="price"',
  'itemscope',
  '<del>',
  '<sup>',
];

function checkInvariants(r: Extraction, what: string): void {
  assert.equal(
    r.chosen,
    r.candidates.find((c) => !c.ignored),
    `${what}: chosen is the first eligible candidate`,
  );
  assert.ok(r.chosen || r.failure, `${what}: no price means a failure reason`);
  assert.ok(!(r.chosen && r.failure), `${what}: a price and a failure at once`);
  for (const c of r.candidates) assert.match(c.price, DECIMAL, `${what}: ${c.detail}`);
  assert.ok(['in_stock', 'out_of_stock', 'preorder', 'unknown'].includes(r.availability));
}

describe('extraction on damaged pages', () => {
  it('never throws and keeps its invariants on mutated fixture pages', () => {
    const random = rng(20240601);
    const files = fs.readdirSync(PAGES_DIR).filter((f) => f.endsWith('.html') && f !== 'big-page.html');
    for (let i = 0; i < 400; i++) {
      const file = files[Math.floor(random() * files.length)] as string;
      let html = page(file);
      for (let k = 0; k < 5; k++) {
        const at = Math.floor(random() * html.length);
        const op = random();
        if (op < 0.3) html = html.slice(0, at) + html.slice(at + Math.floor(random() * 50));
        else if (op < 0.85) html = html.slice(0, at) + JUNK[Math.floor(random() * JUNK.length)] + html.slice(at);
        else html = html.slice(0, at);
      }
      const options =
        random() < 0.3 ? { selector: ['.price', 'span', 'div > p', '[itemprop=price]', 'a:has(b)'][i % 5] } : {};
      checkInvariants(extractPrices(html, options), `${file} mutation ${i}`);
    }
  });

  it('parsePrice returns exact decimals or a reason for any short text', () => {
    const random = rng(7);
    const alphabet = "0123456789.,' -–$€£¥krzłCHF()/%wasNow";
    for (let i = 0; i < 5000; i++) {
      const text = Array.from(
        { length: Math.floor(random() * 20) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join('');
      const r = parsePrice(text);
      if (r.ok) assert.match(r.amount, DECIMAL, JSON.stringify(text));
      else assert.ok(r.reason.length > 0);
    }
  });
});
