/**
 * The HTTP fetcher against the fixture site: every page, compression, charsets, non-HTML,
 * error statuses, timeouts, size caps (including decompression bombs) and redirects.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { extractPrices } from '../../src/extraction/index.js';
import { decodeText, decompress, parseContentEncoding } from '../../src/fetcher/body.js';
import { createHttpFetcher, type HttpFetcher } from '../../src/fetcher/http.js';
import { parseRetryAfter } from '../../src/fetcher/retry-after.js';
import { CHARSET_PAGE_TEXT, PAGES_DIR, startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import { TEST_UA, fetchError, testConfig } from './helpers/fetcher.js';

let site: FixtureSite;
let fetcher: HttpFetcher;
before(async () => {
  site = await startFixtureSite();
  fetcher = createHttpFetcher(testConfig());
});
after(async () => {
  await fetcher.close();
  await site.close();
});

describe('pages', () => {
  test('every fixture page arrives byte for byte, with its status, type and size', async () => {
    for (const file of site.pages) {
      const expected = fs.readFileSync(path.join(PAGES_DIR, file), 'utf8');
      const page = await fetcher.fetch({ url: site.pageUrl(file), respectRobots: true });
      assert.equal(page.status, 200, file);
      assert.equal(page.body, expected, file);
      assert.equal(page.bytes, Buffer.byteLength(expected), file);
      assert.equal(page.finalUrl, site.pageUrl(file));
      assert.equal(page.url, site.pageUrl(file));
      assert.deepEqual(page.redirects, []);
      assert.equal(page.charset, 'utf-8');
      assert.ok(page.ms >= 0);
    }
    assert.ok(site.pages.length >= 40);
  });

  test('the fetched page feeds the extractor', async () => {
    const page = await fetcher.fetch({ url: site.pageUrl('big-page.html'), respectRobots: true });
    const r = extractPrices(page.body);
    assert.equal(r.chosen?.price, '1299.00');
    assert.equal(r.chosen?.currency, 'EUR');
  });

  test('requests carry our User-Agent and browser-like Accept headers', async () => {
    site.clearLog();
    await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false });
    const [req] = site.requests;
    assert.equal(req?.userAgent, TEST_UA);
    assert.match(String(req?.headers.accept), /^text\/html,application\/xhtml\+xml/);
    assert.equal(req?.headers['accept-encoding'], 'gzip, deflate, br');
    assert.ok(req?.headers['accept-language']);
    assert.equal(req?.method, 'GET');
  });

  test('the URL fragment is not sent', async () => {
    site.clearLog();
    const page = await fetcher.fetch({ url: `${site.pageUrl('jsonld-basic.html')}#reviews`, respectRobots: false });
    assert.equal(site.requests[0]?.path, '/pages/jsonld-basic.html');
    assert.equal(page.finalUrl, site.pageUrl('jsonld-basic.html'));
  });

  test('connections are reused (keep-alive)', async () => {
    site.clearLog();
    for (let i = 0; i < 5; i++) await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false });
    assert.equal(site.hits('/pages/jsonld-basic.html'), 5);
    // undici returns a connection to its pool a tick after the body ended, so a fetch started
    // at once takes a second connection; after that the two are reused.
    const count = new Set(site.requests.map((r) => r.remotePort)).size;
    assert.ok(count <= 2, `opened ${count} connections for 5 sequential fetches`);
  });
});

describe('compression', () => {
  const expected = fs.readFileSync(path.join(PAGES_DIR, 'big-page.html'), 'utf8');
  for (const enc of ['gzip', 'br', 'deflate', 'deflate-raw']) {
    test(`${enc}`, async () => {
      const page = await fetcher.fetch({ url: `${site.url}/encoded/${enc}/big-page.html`, respectRobots: true });
      assert.equal(page.body, expected);
      assert.equal(page.bytes, Buffer.byteLength(expected), 'bytes counts the decoded size');
    });
  }

  test('a site that compresses per Accept-Encoding', async () => {
    const negotiating = await startFixtureSite({ negotiateEncoding: true });
    try {
      const page = await fetcher.fetch({ url: negotiating.pageUrl('big-page.html'), respectRobots: false });
      assert.equal(page.body, expected);
    } finally {
      await negotiating.close();
    }
  });
});

describe('charsets', () => {
  for (const [route, charset] of [
    ['latin1-header', 'windows-1252'],
    ['meta', 'windows-1252'],
    ['http-equiv', 'windows-1252'],
    ['bom', 'utf-8'],
    ['none', 'utf-8'],
  ] as const) {
    test(`${route}: decoded as ${charset}`, async () => {
      const page = await fetcher.fetch({ url: `${site.url}/charset/${route}`, respectRobots: true });
      assert.equal(page.charset, charset);
      assert.equal(/<p id="text">([^<]*)<\/p>/.exec(page.body)?.[1], CHARSET_PAGE_TEXT);
      assert.ok(!page.body.startsWith('\ufeff'), 'the BOM is not part of the text');
      assert.equal(extractPrices(page.body).chosen?.price, '12.50');
    });
  }
});

describe('content types', () => {
  test('JSON and plain text are returned for the extractor to judge', async () => {
    const json = await fetcher.fetch({ url: `${site.url}/files/data.json`, respectRobots: true });
    assert.equal(json.contentType, 'application/json');
    assert.equal(JSON.parse(json.body).product.price, '19.99');
    assert.equal(extractPrices(json.body).failure, 'the response is JSON, not an HTML page');
    const text = await fetcher.fetch({ url: `${site.url}/files/plain.txt`, respectRobots: true });
    assert.match(text.body, /Price: \$19\.99/);
  });

  test('a page without Content-Type is read when it is text', async () => {
    const page = await fetcher.fetch({ url: `${site.url}/files/no-type`, respectRobots: true });
    assert.equal(page.contentType, null);
    assert.match(page.body, /application\/ld\+json/);
  });

  for (const [route, message] of [
    ['document.pdf', 'the address serves application/pdf, not a web page'],
    ['image.png', 'the address serves image/png, not a web page'],
    ['download', 'the address serves binary data (application/octet-stream), not a web page'],
  ] as const) {
    test(`${route} is refused as unsupported_content`, async () => {
      const err = await fetchError(fetcher.fetch({ url: `${site.url}/files/${route}`, respectRobots: true }));
      assert.equal(err.code, 'unsupported_content');
      assert.equal(err.message, message);
    });
  }
});

describe('HTTP errors', () => {
  for (const [status, text] of [
    [404, 'the page answered 404 Not Found'],
    [410, 'the page answered 410 Gone'],
    [500, 'the page answered 500 Internal Server Error'],
    [403, 'the page answered 403 Forbidden'],
  ] as const) {
    test(`${status}`, async () => {
      const err = await fetchError(fetcher.fetch({ url: `${site.url}/status/${status}`, respectRobots: true }));
      assert.equal(err.code, 'http_error');
      assert.equal(err.status, status);
      assert.equal(err.message, text);
      assert.equal(err.retryAfterMs, undefined);
    });
  }

  test('a 3xx without Location', async () => {
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/status/300`, respectRobots: false }));
    assert.equal(err.code, 'http_error');
    assert.equal(err.message, 'the page answered 300 Multiple Choices without a redirect target');
  });

  test('a 204 is an empty page', async () => {
    const page = await fetcher.fetch({ url: `${site.url}/status/204`, respectRobots: false });
    assert.equal(page.status, 204);
    assert.equal(page.body, '');
  });

  test('Retry-After: seconds and HTTP dates', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });
});

describe('timeouts', () => {
  let quick: HttpFetcher;
  before(() => {
    quick = createHttpFetcher(testConfig({ fetchTimeoutMs: 300 }));
  });
  after(() => quick.close());

  test('headers, then a body that stalls', async () => {
    const err = await fetchError(quick.fetch({ url: `${site.url}/slow`, respectRobots: true }));
    assert.equal(err.code, 'timeout');
    assert.equal(err.message, 'the page did not load within 0.3 s (FETCH_TIMEOUT_MS)');
  });

  test('no headers at all', async () => {
    const err = await fetchError(quick.fetch({ url: `${site.url}/slow-headers`, respectRobots: false }));
    assert.equal(err.code, 'timeout');
  });

  test('a slow page that finishes within the timeout is fine', async () => {
    const page = await quick.fetch({ url: `${site.url}/slow?ms=20`, respectRobots: false });
    assert.match(page.body, /"price":"10.00"/);
  });

  test('the timeout covers the whole redirect chain', async () => {
    const target = encodeURIComponent('/slow');
    const err = await fetchError(
      quick.fetch({ url: `${site.url}/redirect/to?location=${target}`, respectRobots: false }),
    );
    assert.equal(err.code, 'timeout');
  });

  test("the caller's signal cancels with the caller's reason (not a FetchError)", async () => {
    const ac = new AbortController();
    const waiting = site.waitForRequests(1, (r) => r.path === '/slow-headers');
    const p = fetcher.fetch({ url: `${site.url}/slow-headers`, respectRobots: false, signal: ac.signal });
    await waiting;
    ac.abort(new Error('shutting down'));
    await assert.rejects(p, { message: 'shutting down' });
  });
});

describe('size caps', () => {
  let capped: HttpFetcher;
  before(() => {
    capped = createHttpFetcher(testConfig({ fetchMaxBytes: 64 * 1024 }));
  });
  after(() => capped.close());

  test('/huge with Content-Length is refused from the header', async () => {
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/huge`, respectRobots: true }));
    assert.equal(err.code, 'too_large');
    assert.equal(err.message, 'the page is larger than 5 MB (FETCH_MAX_BYTES)');
  });

  test('/huge without Content-Length is cut while streaming', async () => {
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/huge?length=0`, respectRobots: true }));
    assert.equal(err.code, 'too_large');
  });

  test('a page just under the cap passes; just over fails', async () => {
    assert.equal(
      (await capped.fetch({ url: `${site.url}/huge?bytes=65536&length=0`, respectRobots: false })).bytes,
      65_536,
    );
    const err = await fetchError(capped.fetch({ url: `${site.url}/huge?bytes=65537&length=0`, respectRobots: false }));
    assert.equal(err.code, 'too_large');
    assert.equal(err.message, 'the page is larger than 64 KB (FETCH_MAX_BYTES)');
  });

  test('the cap applies to the decompressed size: big-page.html (150 KB, 22 KB as br) is too large for 64 KB', async () => {
    const err = await fetchError(capped.fetch({ url: `${site.url}/encoded/br/big-page.html`, respectRobots: false }));
    assert.equal(err.code, 'too_large');
  });

  for (const enc of ['gzip', 'br', 'deflate']) {
    test(`a ${enc} bomb (32 MiB in a few KB) fails as too_large`, async () => {
      const err = await fetchError(fetcher.fetch({ url: `${site.url}/bomb/${enc}`, respectRobots: false }));
      assert.equal(err.code, 'too_large');
      assert.equal(err.message, 'the page is larger than 5 MB (FETCH_MAX_BYTES)');
    });
  }
});

describe('redirects', () => {
  test('a chain within the limit is followed and reported', async () => {
    const page = await fetcher.fetch({ url: `${site.url}/redirect/chain/3`, respectRobots: true });
    assert.equal(page.status, 200);
    assert.equal(
      page.finalUrl,
      site.pageUrl('jsonld-basic.html').replace('/pages/jsonld-basic.html', '/redirect/chain/0'),
    );
    assert.deepEqual(
      page.redirects,
      [2, 1, 0].map((n) => `${site.url}/redirect/chain/${n}`),
    );
    assert.equal(page.url, `${site.url}/redirect/chain/3`);
  });

  test('exactly FETCH_MAX_REDIRECTS hops pass; one more fails', async () => {
    const page = await fetcher.fetch({ url: `${site.url}/redirect/chain/5`, respectRobots: false });
    assert.equal(page.redirects.length, 5);
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/redirect/chain/6`, respectRobots: false }));
    assert.equal(err.code, 'too_many_redirects');
    assert.match(
      err.message,
      /^the page redirected more than 5 times \(FETCH_MAX_REDIRECTS\); last to http:\/\/127\.0\.0\.1:\d+\/redirect\/chain\/0$/,
    );
  });

  test('FETCH_MAX_REDIRECTS=0 follows none', async () => {
    const strict = createHttpFetcher(testConfig({ fetchMaxRedirects: 0 }));
    try {
      const err = await fetchError(strict.fetch({ url: `${site.url}/redirect/chain/1`, respectRobots: false }));
      assert.equal(err.code, 'too_many_redirects');
    } finally {
      await strict.close();
    }
  });

  test('a loop is reported as a loop', async () => {
    site.clearLog();
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/redirect/loop/a`, respectRobots: false }));
    assert.equal(err.code, 'too_many_redirects');
    assert.equal(
      err.message,
      `the page redirects in a loop: ${site.url}/redirect/loop/a → ${site.url}/redirect/loop/b → ${site.url}/redirect/loop/a`,
    );
    assert.equal(site.hits('/redirect/loop/a'), 1);
    assert.equal(site.hits('/redirect/loop/b'), 1);
  });

  test('relative and 301/307/308 redirects', async () => {
    for (const status of [301, 303, 307, 308]) {
      const page = await fetcher.fetch({
        url: `${site.url}/redirect/to?status=${status}&location=../pages/og-sale-price.html`,
        respectRobots: false,
      });
      assert.equal(page.finalUrl, site.pageUrl('og-sale-price.html'), String(status));
    }
  });

  test('redirect hops honour robots.txt', async () => {
    const err = await fetchError(
      fetcher.fetch({ url: `${site.url}/redirect/to?location=/private/jsonld-basic.html`, respectRobots: true }),
    );
    assert.equal(err.code, 'robots_disallowed');
  });
});

describe('lifecycle', () => {
  test('after close, fetches fail', async () => {
    const f = createHttpFetcher(testConfig());
    await f.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false });
    await f.close();
    await f.close();
    const err = await fetchError(f.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false }));
    assert.equal(err.code, 'network');
    assert.equal(err.message, 'the fetcher has been closed');
  });

  test('a fetch in flight when the fetcher closes fails with a FetchError', async () => {
    const f = createHttpFetcher(testConfig());
    const waiting = site.waitForRequests(1, (r) => r.path === '/slow-headers?ms=5000');
    const p = f.fetch({ url: `${site.url}/slow-headers?ms=5000`, respectRobots: false });
    await waiting;
    await f.close();
    const err = await fetchError(p);
    assert.equal(err.code, 'network');
  });
});

describe('decompress (unit)', () => {
  test('inflating stops at the cap: a 64 MiB bomb against a 1 MiB cap', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024));
    assert.ok(bomb.length < 100_000);
    const err = await fetchError(decompress(bomb, ['gzip'], 1024 * 1024));
    assert.equal(err.code, 'too_large');
    assert.equal(err.message, 'the page is larger than 1 MB (FETCH_MAX_BYTES)');
  });

  test('codings are undone in reverse order; identity is ignored; unknown ones are refused', async () => {
    const text = Buffer.from('<p>hello</p>');
    const twice = zlib.brotliCompressSync(zlib.gzipSync(text));
    assert.deepEqual(parseContentEncoding('gzip, identity, br'), ['gzip', 'br']);
    assert.equal((await decompress(twice, ['gzip', 'br'], 1024)).toString(), '<p>hello</p>');
    const err = await fetchError(decompress(text, ['zstd'], 1024));
    assert.equal(err.code, 'unsupported_content');
  });

  test('a corrupt body is a network error', async () => {
    const err = await fetchError(decompress(Buffer.from('not gzip at all'), ['gzip'], 1024));
    assert.equal(err.code, 'network');
    assert.match(err.message, /^the page's gzip compressed body is corrupt/);
  });
});

describe('decodeText (unit)', () => {
  test('windows-1252 bytes 0x80-0x9F are the characters browsers show (Node 20 TextDecoder is wrong there)', () => {
    const bytes = Buffer.from([0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0x96, 0x20, 0x85, 0x20, 0x99, 0x20, 0xe9]);
    assert.equal(decodeText(bytes, 'text/html; charset=windows-1252').text, '€ “q” – … ™ é');
    assert.equal(decodeText(bytes, 'text/html; charset=us-ascii').text, '€ “q” – … ™ é');
  });

  test('other legacy encodings come from TextDecoder', () => {
    assert.deepEqual(decodeText(Buffer.from([0x83, 0x65]), 'text/html; charset=Shift_JIS'), {
      text: 'テ',
      charset: 'shift_jis',
    });
    assert.deepEqual(decodeText(Buffer.from([0x8a, 0x9a]), 'text/html; charset="windows-1250"'), {
      text: 'Šš',
      charset: 'windows-1250',
    });
  });

  test('an unknown label falls back to the next source, then UTF-8', () => {
    const doc = Buffer.from('<meta charset="iso-8859-2"><p>\xa9</p>', 'latin1');
    assert.equal(decodeText(doc, 'text/html; charset=x-made-up').charset, 'iso-8859-2');
    assert.equal(decodeText(Buffer.from('<p>ok</p>'), 'text/html; charset=x-made-up').charset, 'utf-8');
  });

  test('a document cannot declare itself UTF-16; an XML declaration counts', () => {
    assert.equal(decodeText(Buffer.from('<meta charset="utf-16"><p>x</p>'), 'text/html').charset, 'utf-8');
    assert.equal(
      decodeText(Buffer.from('<?xml version="1.0" encoding="ISO-8859-2"?><a/>'), 'application/xml').charset,
      'iso-8859-2',
    );
  });

  test('JSON is not sniffed for <meta>', () => {
    assert.equal(
      decodeText(Buffer.from('{"html":"<meta charset=\\"koi8-r\\">"}'), 'application/json').charset,
      'utf-8',
    );
  });
});
