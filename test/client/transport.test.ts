import assert from 'node:assert/strict';
import type http from 'node:http';
import { describe, it } from 'node:test';
import { ApiError, createClient, type RetryInfo, take, type Usage } from '../../clients/typescript/src/index.js';
import { stubServer } from './support.js';

// The transport's answers to what the service says, shown with loopback servers that answer
// exactly as a test needs: a 409 that says when to ask again, streamed CSV, pages, keys.

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

describe("the client's transport, further", () => {
  it('retries a 409 that carries Retry-After (a listing being checked), with the same Idempotency-Key; never one without', async () => {
    const keys: string[] = [];
    let calls = 0;
    const stub = await stubServer((req, res) => {
      req.resume();
      keys.push(String(req.headers['idempotency-key']));
      calls++;
      if (req.url === '/api/v1/listings/lst_plain/check')
        return json(res, 409, { error: 'taken', status: 409, code: 'conflict' });
      if (calls === 1)
        return json(
          res,
          409,
          { error: 'The listing is being checked right now', status: 409, code: 'conflict' },
          { 'retry-after': '0' },
        );
      return json(res, 200, { object: 'listing_check', id: 'chk_1' });
    });
    try {
      const retries: RetryInfo[] = [];
      const ph = createClient({
        baseUrl: stub.url,
        apiKey: 'k',
        retry: { baseDelayMs: 1 },
        onRetry: (r) => retries.push(r),
      });
      const check = await ph.POST('/api/v1/listings/{id}/check', { params: { path: { id: 'lst_busy' } } });
      assert.equal(check.id, 'chk_1');
      assert.equal(retries.length, 1);
      assert.ok(retries[0]!.error instanceof ApiError && retries[0]!.error.status === 409);
      assert.equal(keys[0], keys[1], 'one call, one Idempotency-Key');
      const plain = await ph
        .POST('/api/v1/listings/{id}/check', { params: { path: { id: 'lst_plain' } } })
        .catch((e: unknown) => e);
      assert.ok(plain instanceof ApiError && plain.status === 409);
      assert.equal(retries.length, 1, 'a 409 without Retry-After is final');
    } finally {
      await stub.close();
    }
  });

  it("passes a CSV answer on as a stream: the attempt's timeout covers its headers, not a long download", async () => {
    const stub = await stubServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      res.write('product_id,sku\r\n');
      // Longer than the client's timeout, in pieces.
      let n = 0;
      const timer = setInterval(() => {
        res.write(`prod_${n},S${n}\r\n`);
        if (++n === 6) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
    });
    try {
      const ph = createClient({ baseUrl: stub.url, apiKey: 'k', timeoutMs: 150 });
      const stream = await ph.GET('/api/v1/prices.csv', { parseAs: 'stream' });
      assert.ok(stream instanceof ReadableStream);
      const text = await new Response(stream).text();
      assert.equal(text.split('\r\n').filter(Boolean).length, 7);
    } finally {
      await stub.close();
    }
  });

  it('pages 100 items a request unless told otherwise, stops asking when the caller stops, and asks a key function per request', async () => {
    const asked: { limit: string | null; cursor: string | null; auth: string | undefined }[] = [];
    const stub = await stubServer((req, res) => {
      req.resume();
      const u = new URL(req.url!, 'http://x');
      asked.push({
        limit: u.searchParams.get('limit'),
        cursor: u.searchParams.get('cursor'),
        auth: req.headers.authorization,
      });
      const page = Number(u.searchParams.get('cursor') ?? 0);
      const limit = Number(u.searchParams.get('limit'));
      json(
        res,
        200,
        {
          data: Array.from({ length: limit }, (_, i) => ({ id: `comp_${page * limit + i}` })),
          pagination: { limit, has_more: page < 4, next_cursor: page < 4 ? String(page + 1) : null },
        },
        {
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': String(999 - asked.length),
          'x-ratelimit-reset': '2000000000',
        },
      );
    });
    try {
      let key = 'first';
      const usage: Usage[] = [];
      const ph = createClient({ baseUrl: stub.url, apiKey: () => key, onUsage: (u) => usage.push(u) });
      const all = [];
      for await (const c of ph.paginate('/api/v1/competitors')) {
        all.push(c);
        key = 'second';
      }
      assert.equal(all.length, 500);
      assert.deepEqual(
        asked.map((a) => a.limit),
        ['100', '100', '100', '100', '100'],
      );
      assert.deepEqual(
        asked.map((a) => a.auth),
        ['Bearer first', 'Bearer second', 'Bearer second', 'Bearer second', 'Bearer second'],
      );
      assert.deepEqual(
        usage.map((u) => u.remaining),
        [998, 997, 996, 995, 994],
      );

      asked.length = 0;
      const some = await take(ph.paginate('/api/v1/competitors', { params: { query: { limit: 7 } } }), 10);
      assert.equal(some.length, 10);
      assert.deepEqual(
        asked.map((a) => [a.limit, a.cursor]),
        [
          ['7', null],
          ['7', '1'],
        ],
        'no page beyond the tenth item',
      );
      const sizes = [];
      for await (const page of ph.pages('/api/v1/competitors', { params: { query: { limit: 50 } } }))
        sizes.push(page.length);
      assert.deepEqual(sizes, [50, 50, 50, 50, 50]);
    } finally {
      await stub.close();
    }
  });

  it('tells onError of every call that fails, once, after its retries', async () => {
    const stub = await stubServer((req, res) => {
      req.resume();
      json(res, 401, {
        error: 'The API key is not valid or has been revoked',
        status: 401,
        code: 'unauthorized',
        request_id: 'req_1',
      });
    });
    try {
      const errors: unknown[] = [];
      const ph = createClient({ baseUrl: stub.url, apiKey: 'revoked', onError: (e) => errors.push(e) });
      await assert.rejects(ph.GET('/api/v1/usage'), ApiError);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof ApiError && errors[0].status === 401 && errors[0].requestId === 'req_1');
    } finally {
      await stub.close();
    }
  });
});
