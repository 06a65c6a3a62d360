import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createExtractor } from '../../src/checks/extractor.js';
import { type ExtractOptions, extractPrices } from '../../src/extraction/index.js';
import { manifest, page } from '../extraction/helpers/fixtures.js';

/** The extraction thread gives exactly what extractPrices gives on the calling thread. */

describe('extraction thread', () => {
  const threaded = createExtractor(2);
  after(() => threaded.close());

  it('reads every fixture page as extractPrices does, many pages at once', { timeout: 60_000 }, async () => {
    const cases = manifest().concat(
      manifest().map((c) => ({ ...c, options: { ...c.options, currencyOverride: 'CHF' } })),
    );
    const results = await Promise.all(cases.map((c) => threaded.extract(page(c.file), c.options ?? {})));
    cases.forEach((c, i) => {
      const expected = extractPrices(page(c.file), c.options ?? {});
      assert.deepEqual(results[i], expected, c.file);
      // `chosen` is still the same object as its entry in `candidates`.
      if (results[i]!.chosen) assert.ok(results[i]!.candidates.includes(results[i]!.chosen!), c.file);
    });
  });

  it('an exception on the thread reaches the caller as an ExtractionError with its stack, and the thread goes on', async () => {
    const html = page('jsonld-basic.html');
    // Options no caller sends: the engine throws on them (a stand-in for a bug in it).
    const broken = { selector: 42 } as unknown as ExtractOptions;
    let inline: Error | undefined;
    try {
      extractPrices(html, broken);
    } catch (err) {
      inline = err as Error;
    }
    assert.ok(inline, 'extractPrices throws on these options');
    const err = await threaded.extract(html, broken).then(
      () => assert.fail('expected the extraction to fail'),
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'ExtractionError');
    assert.equal(err.message, inline.message);
    assert.match(err.stack ?? '', /at .*extractPrices/, "the stack is the thread's, where the engine threw");
    assert.deepEqual(await threaded.extract(html, {}), extractPrices(html, {}));
  });

  it('0 threads reads on the calling thread', async () => {
    const inline = createExtractor(0);
    const html = page('jsonld-basic.html');
    assert.deepEqual(await inline.extract(html, {}), extractPrices(html, {}));
    await inline.close();
  });

  it('can be closed and closed again', async () => {
    const x = createExtractor(1);
    await x.extract(page('jsonld-basic.html'), {});
    await x.close();
    await x.close();
  });
});
