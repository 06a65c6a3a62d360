import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  ApiError,
  BATCH_MAX,
  createClient,
  NetworkError,
  type ProductInput,
  type RetryInfo,
  TimeoutError,
} from '../../clients/typescript/src/index.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { makeKeys, stubServer } from './support.js';

// @pricehound/client (clients/typescript) against a real server process: typed calls and
// errors, the ETag cache, batches split and merged, pagination. Timeouts, aborts and 503s are
// shown with small loopback servers that answer exactly as a test needs.

describe('the typed client against the service', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let keys: string[];
  before(async () => {
    storage = await testStorage();
    // A key (so an account) per test: their products do not mix.
    keys = await makeKeys(storage, ['business', 'business', 'business', 'business']);
    server = await spawnServer(storage.env);
  });
  after(async () => {
    await server?.stop();
    await storage?.cleanup();
  });

  it('calls any path with typed bodies, and throws typed errors with the request id, retrying none of them', async () => {
    const retries: RetryInfo[] = [];
    const client = createClient({ baseUrl: server.url, apiKey: keys[0]!, onRetry: (r) => retries.push(r) });
    const created = await client.POST('/api/v1/products', {
      body: { name: 'Kettle <b>', base_price: 24.5, currency: 'EUR', sku: 'K-1' },
    });
    assert.equal(created.object, 'product');
    assert.equal(created.name, 'Kettle <b>');
    const got = await client.GET('/api/v1/products/{id}', { params: { path: { id: created.id } } });
    assert.deepEqual(got, created);
    const patched = await client.PATCH('/api/v1/products/{id}', {
      params: { path: { id: created.id } },
      body: { name: 'Kettle' },
    });
    assert.equal(patched.name, 'Kettle');

    const missing = await client
      .GET('/api/v1/products/{id}', { params: { path: { id: 'prod_doesnotexist0000000000' } } })
      .catch((e: unknown) => e);
    assert.ok(missing instanceof ApiError, String(missing));
    assert.equal(missing.status, 404);
    assert.ok(['not_found', 'validation_failed'].includes(missing.code), missing.code);
    assert.match(missing.requestId ?? '', /^req_/);
    assert.equal(missing.response.headers.get('x-request-id'), missing.requestId);

    const invalid = await client
      .POST('/api/v1/products', { body: { name: 'Bad', base_price: -1, currency: 'EUR' } })
      .catch((e: unknown) => e);
    assert.ok(invalid instanceof ApiError);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.code, 'validation_failed');
    assert.ok(
      invalid.details.some((d) => d.field === 'base_price'),
      JSON.stringify(invalid.details),
    );

    // The same SKU again: a 409, answered once (a retry could never change it).
    const taken = await client
      .POST('/api/v1/products', { body: { name: 'Again', base_price: 1, currency: 'EUR', sku: 'K-1' } })
      .catch((e: unknown) => e);
    assert.ok(taken instanceof ApiError);
    assert.equal(taken.status, 409);

    const unauthorized = await createClient({ baseUrl: server.url, apiKey: 'ph_live_nope' })
      .GET('/api/v1/products')
      .catch((e: unknown) => e);
    assert.ok(unauthorized instanceof ApiError);
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.code, 'unauthorized');

    assert.equal(await client.DELETE('/api/v1/products/{id}', { params: { path: { id: created.id } } }), undefined);
    assert.deepEqual(retries, []);
  });

  it('answers a repeated GET from its 304 with the ETag cache, and sees a change', async () => {
    const client = createClient({ baseUrl: server.url, apiKey: keys[1]!, etagCache: true });
    const p = await client.POST('/api/v1/products', { body: { name: 'Toaster', base_price: 30, currency: 'EUR' } });
    const path = { params: { path: { id: p.id } } };
    const first = await client.GET('/api/v1/products/{id}', path);
    assert.equal(client.etagCache!.hits, 0);
    const again = await client.GET('/api/v1/products/{id}', path);
    assert.equal(client.etagCache!.hits, 1, 'the second GET was a 304 answered from the cache');
    assert.deepEqual(again, first);
    const { response } = await client.raw.GET('/api/v1/products/{id}', path);
    assert.equal(response.status, 200);
    assert.equal(client.etagCache!.hits, 2);
    await client.PATCH('/api/v1/products/{id}', { ...path, body: { name: 'Toaster 2' } });
    const changed = await client.GET('/api/v1/products/{id}', path);
    assert.equal(changed.name, 'Toaster 2');
    assert.equal(client.etagCache!.hits, 2, 'a changed resource is a 200, not the cached copy');
  });

  it(
    'splits products and prices into batches of 1000 and merges the per-item results',
    { timeout: 120_000 },
    async () => {
      const client = createClient({ baseUrl: server.url, apiKey: keys[2]! });
      const progress: number[] = [];
      const products: ProductInput[] = Array.from({ length: 2500 }, (_, i) => ({
        name: `Item ${i}`,
        sku: i === 2400 ? 'SKU-10' : `SKU-${i}`, // 2400 repeats 10's SKU: a 409 in another batch
        base_price: i === 1500 ? -1 : 5 + (i % 50), // 1500 is invalid: a 422
        currency: 'EUR',
      }));
      const result = await client.createProducts(products, { onProgress: (done) => progress.push(done) });
      assert.deepEqual(progress, [1000, 2000, 2500]);
      assert.equal(result.data.length, 2500);
      assert.deepEqual(
        result.data.map((d) => d.index),
        Array.from({ length: 2500 }, (_, i) => i),
      );
      assert.equal(result.created, 2498);
      assert.equal(result.failed, 2);
      // Each outcome is a union on `status`: the resource once it is 201, the error otherwise (no casts).
      const invalid = result.data[1500]!;
      assert.ok(invalid.status !== 201);
      assert.equal(invalid.status, 422);
      assert.equal(invalid.error.code, 'validation_failed');
      assert.equal(result.data[2400]!.status, 409);
      const done = result.data[2399]!;
      assert.ok(done.status === 201);
      assert.equal(done.product.sku, 'SKU-2399');

      // Every page, followed by cursor, through `for await`.
      let count = 0;
      const skus = new Set<string>();
      for await (const p of client.paginate('/api/v1/products', { params: { query: { limit: 100, sort: 'sku' } } })) {
        count++;
        skus.add(p.sku ?? '');
      }
      assert.equal(count, 2498);
      assert.equal(skus.size, 2498);

      const first = result.data[0]!;
      assert.ok(first.status === 201);
      const product = first.product;
      const observations = Array.from({ length: 1200 }, (_, i) => ({
        product_id: i === 1100 ? 'prod_00000000000000000000000000' : product.id,
        price: (1000 + i) / 100,
        currency: 'EUR',
        observed_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      }));
      const ingested = await client.ingestPrices(observations);
      assert.equal(ingested.data.length, 1200);
      assert.equal(ingested.created, 1199);
      assert.equal(ingested.failed, 1);
      assert.equal(ingested.data[1100]!.index, 1100);
      assert.ok([404, 422].includes(ingested.data[1100]!.status));
      const recorded = ingested.data[1199]!;
      assert.ok(recorded.status === 201);
      assert.equal(recorded.observation.product_id, product.id);

      await assert.rejects(client.createProducts(products, { atomic: true }), RangeError);
      assert.equal(BATCH_MAX, 1000);
    },
  );

  it('answers an atomic batch as one error and creates nothing', async () => {
    const client = createClient({ baseUrl: server.url, apiKey: keys[3]! });
    const err = await client
      .createProducts(
        [
          { name: 'ok', base_price: 1, currency: 'EUR' },
          { name: 'bad', base_price: 1, currency: 'EURO' },
        ],
        { atomic: true },
      )
      .catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 422);
    assert.ok(
      err.details.some((d) => d.field.startsWith('products[1]')),
      JSON.stringify(err.details),
    );
    let listed = 0;
    for await (const _ of client.paginate('/api/v1/products')) listed++;
    assert.equal(listed, 0, 'nothing was created');
  });
});

describe('the client’s transport', () => {
  it('retries a 503 after its Retry-After with the same Idempotency-Key, and never a 400', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const stub = await stubServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      if (req.url === '/bad') {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":"no","status":400,"code":"invalid_request","request_id":"req_x"}');
      } else if (seen.length === 1) {
        res
          .writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' })
          .end('{"error":"busy","status":503,"code":"unavailable"}');
      } else {
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      }
    });
    try {
      const retries: RetryInfo[] = [];
      const client = createClient({ baseUrl: stub.url, retry: { baseDelayMs: 10 }, onRetry: (r) => retries.push(r) });
      const started = Date.now();
      const answer = await client.POST('/api/v1/products', { body: { name: 'x', base_price: 1, currency: 'EUR' } });
      assert.deepEqual(answer, { ok: true });
      assert.ok(Date.now() - started >= 1000, 'waited for Retry-After');
      assert.equal(seen.length, 2);
      assert.match(String(seen[0]!['idempotency-key']), /^[0-9a-f-]{36}$/);
      assert.equal(seen[1]!['idempotency-key'], seen[0]!['idempotency-key']);
      assert.equal(retries.length, 1);
      assert.equal((retries[0]!.error as ApiError).status, 503);

      const other = await client.POST('/api/v1/products', { body: { name: 'y', base_price: 1, currency: 'EUR' } });
      assert.deepEqual(other, { ok: true });
      assert.notEqual(seen[2]!['idempotency-key'], seen[0]!['idempotency-key'], 'each call has its own key');

      const bad = await client.GET('/bad' as '/api/v1/products').catch((e: unknown) => e);
      assert.ok(bad instanceof ApiError);
      assert.equal(bad.code, 'invalid_request');
      assert.equal(bad.requestId, 'req_x');
      assert.equal(seen.length, 4, 'a 400 is not retried');
    } finally {
      await stub.close();
    }
  });

  it('times out each attempt, retries it, and fails with TimeoutError', async () => {
    let requests = 0;
    const stub = await stubServer((req) => {
      requests++;
      req.resume(); // and never answer
    });
    try {
      const client = createClient({ baseUrl: stub.url, timeoutMs: 200, retry: { maxAttempts: 2, baseDelayMs: 10 } });
      const err = await client.GET('/api/v1/products').catch((e: unknown) => e);
      assert.ok(err instanceof TimeoutError, String(err));
      assert.ok(err instanceof NetworkError);
      assert.equal(requests, 2);
    } finally {
      await stub.close();
    }
  });

  it('stops at once when the caller aborts, with the signal’s reason', async () => {
    let requests = 0;
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    const stub = await stubServer((req) => {
      requests++;
      req.resume();
      arrived();
    });
    try {
      const client = createClient({ baseUrl: stub.url, timeoutMs: 0 });
      const controller = new AbortController();
      const call = client.GET('/api/v1/products', { signal: controller.signal });
      await first;
      controller.abort(new Error('user left'));
      await assert.rejects(call, { message: 'user left' });
      assert.equal(requests, 1);
      const already = client.GET('/api/v1/products', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
      assert.equal(((await already) as Error).name, 'AbortError');
    } finally {
      await stub.close();
    }
  });

  it('retries a request that got no answer, and gives up with NetworkError after maxAttempts', async () => {
    let requests = 0;
    const stub = await stubServer((req, res) => {
      requests++;
      req.resume();
      if (requests < 3) res.socket?.destroy();
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"data":[],"pagination":{"limit":20,"has_more":false,"next_cursor":null}}');
    });
    try {
      const retries: RetryInfo[] = [];
      const client = createClient({ baseUrl: stub.url, retry: { baseDelayMs: 10 }, onRetry: (r) => retries.push(r) });
      const page = await client.GET('/api/v1/products');
      assert.deepEqual(page.data, []);
      assert.equal(requests, 3);
      assert.deepEqual(
        retries.map((r) => [r.attempt, r.error.name]),
        [
          [1, 'NetworkError'],
          [2, 'NetworkError'],
        ],
      );
      assert.ok(
        retries.every((r) => r.waitMs <= 10 * 2 ** (r.attempt - 1)),
        'full jitter under the exponential bound',
      );

      requests = -100; // never answers from here on
      const err = await createClient({ baseUrl: stub.url, retry: { maxAttempts: 3, baseDelayMs: 5 } })
        .GET('/api/v1/products')
        .catch((e: unknown) => e);
      assert.ok(err instanceof NetworkError && !(err instanceof TimeoutError), String(err));
      assert.equal(requests, -97);
    } finally {
      await stub.close();
    }
  });
});
