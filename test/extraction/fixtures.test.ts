import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { extractPrices } from '../../src/extraction/index.js';
import { buildBigPage } from './helpers/big-page.js';
import { PAGES_DIR, manifest, page, summary } from './helpers/fixtures.js';

const cases = manifest();

describe('fixture pages (test/fixtures/pages/manifest.json)', () => {
  it('has an expectation for every fixture page', () => {
    const files = fs.readdirSync(PAGES_DIR).filter((f) => f !== 'manifest.json');
    const covered = new Set(cases.map((c) => c.file));
    assert.deepEqual(
      files.filter((f) => !covered.has(f)),
      [],
    );
    assert.ok(files.length >= 30, `only ${files.length} fixture pages`);
  });

  it('big-page.html is what helpers/big-page.ts builds (deterministic, ~150 KB)', () => {
    const built = buildBigPage();
    assert.equal(page('big-page.html'), built);
    assert.ok(Buffer.byteLength(built) >= 150_000 && Buffer.byteLength(built) < 151_000);
  });

  for (const c of cases) {
    it(`${c.file}${c.title ? `: ${c.title}` : ''}`, () => {
      const r = extractPrices(page(c.file), c.options);
      const chosen = r.chosen
        ? { price: r.chosen.price, currency: r.chosen.currency ?? null, source: r.chosen.source }
        : null;
      assert.deepEqual(chosen, c.expect.chosen);
      assert.equal(r.availability, c.expect.availability);
      assert.equal(r.failure, c.expect.failure);
      assert.deepEqual(r.candidates.map(summary), c.expect.candidates);
      // The chosen price is always the first candidate not ignored.
      assert.equal(
        r.chosen,
        r.candidates.find((x) => !x.ignored),
      );
    });
  }
});
