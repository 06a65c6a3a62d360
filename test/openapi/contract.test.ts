import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { Contract, fetchDocument, needsKey, operations } from './support.js';
import { hourStart, MINUTE_MS } from '../../src/time.js';

/**
 * The document is only worth something if it tells the truth: real responses, through the real
 * HTTP pipeline, are checked against it (status documented, body valid against the documented
 * schema, documented headers present and valid, sent headers documented).
 */

const COUNTED = { always: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] };
const REPLAYED = { always: [...COUNTED.always, 'idempotent-replayed'] };

describe('openapi: real responses match the document', () => {
  const t = useTestApp();
  let c: Contract;
  before(async () => {
    c = new Contract(await fetchDocument(t.app));
  });

  for (const prefix of ['/api/v1', '/v1']) {
    it(`products under ${prefix}: every answer of the lifecycle`, async () => {
      const { headers } = await t.newKey();
      const inject = (
        method: string,
        url: string,
        extra: { payload?: unknown; headers?: Record<string, string> } = {},
      ) =>
        t.app.inject({
          method: method as 'GET',
          url,
          headers: { ...headers, ...extra.headers },
          ...(extra.payload !== undefined ? { payload: extra.payload as string } : {}),
        });
      const list = `${prefix}/products`;
      const one = `${prefix}/products/{id}`;
      const body = {
        name: 'Kettle',
        sku: `K-${prefix}`,
        base_price: 19.99,
        currency: 'eur',
        url: 'https://shop.example/kettle',
      };

      const created = await inject('POST', list, { payload: body, headers: { 'idempotency-key': `create-${prefix}` } });
      assert.equal(created.statusCode, 201, created.body);
      c.check('POST', list, created, COUNTED);
      const id = created.json<{ id: string }>().id;
      const replayed = await inject('POST', list, {
        payload: body,
        headers: { 'idempotency-key': `create-${prefix}` },
      });
      c.check('POST', list, replayed, REPLAYED);
      c.check(
        'POST',
        list,
        await inject('POST', list, {
          payload: { ...body, sku: 'other' },
          headers: { 'idempotency-key': `create-${prefix}` },
        }),
        COUNTED,
      );
      c.check(
        'POST',
        list,
        await inject('POST', list, { payload: body, headers: { 'idempotency-key': 'not visible ascii' } }),
        COUNTED,
      );
      c.check('POST', list, await inject('POST', list, { payload: body }), COUNTED); // 409: the SKU is taken
      c.check('POST', list, await inject('POST', list, { payload: { ...body, base_price: 1.23456 } }), COUNTED); // 422
      c.check('POST', list, await inject('POST', list, { payload: '{"name":' }), COUNTED); // 400
      c.check(
        'POST',
        list,
        await inject('POST', list, { payload: 'name=x', headers: { 'content-type': 'text/plain' } }),
        COUNTED,
      ); // 415
      const big = await inject('POST', list, { payload: { ...body, description: 'x'.repeat(1_100_000) } });
      assert.equal(big.statusCode, 413);
      c.check('POST', list, big, COUNTED);

      const got = await inject('GET', `${prefix}/products/${id}`);
      assert.equal(got.statusCode, 200);
      c.check('GET', one, got, COUNTED);
      const notModified = await inject('GET', `${prefix}/products/${id}`, {
        headers: { 'if-none-match': got.headers.etag as string },
      });
      assert.equal(notModified.statusCode, 304);
      c.check('GET', one, notModified, COUNTED);
      c.check('GET', one, await inject('GET', `${prefix}/products/prod_0000000000000000000000000000`), COUNTED); // 404

      for (const method of ['PUT', 'PATCH']) {
        const changed = await inject(method, `${prefix}/products/${id}`, { payload: { base_price: 21 } });
        assert.equal(changed.statusCode, 200, changed.body);
        c.check(method, one, changed, COUNTED);
        c.check(
          method,
          one,
          await inject(method, `${prefix}/products/${id}`, { payload: { currency: 'XXXX' } }),
          COUNTED,
        ); // 422
      }

      const page = await inject('GET', `${list}?limit=1&sort=name`);
      assert.equal(page.statusCode, 200);
      c.check('GET', list, page, COUNTED);
      c.check(
        'GET',
        list,
        await inject('GET', list, { headers: { 'if-none-match': (await inject('GET', list)).headers.etag as string } }),
        COUNTED,
      );
      c.check('GET', list, await inject('GET', `${list}?limit=0`), COUNTED); // 422
      c.check('GET', list, await inject('GET', `${list}?cursor=bm90IGEgY3Vyc29y`), COUNTED); // 400

      const batch = await inject('POST', `${list}/batch`, {
        payload: { products: [{ name: 'A', base_price: 1, currency: 'USD' }, { name: '' }] },
      });
      assert.equal(batch.statusCode, 200, batch.body);
      c.check('POST', `${list}/batch`, batch, COUNTED);
      c.check('POST', `${list}/batch`, await inject('POST', `${list}/batch`, { payload: { products: [] } }), COUNTED); // 422

      const usage = await inject('GET', `${prefix}/usage`);
      assert.equal(usage.statusCode, 200);
      c.check('GET', `${prefix}/usage`, usage, COUNTED);
      c.check('GET', `${prefix}/usage`, await inject('GET', `${prefix}/usage?hours=0`), COUNTED); // 422

      const deleted = await inject('DELETE', `${prefix}/products/${id}`);
      assert.equal(deleted.statusCode, 204);
      c.check('DELETE', one, deleted, COUNTED);
      c.check('DELETE', one, await inject('DELETE', `${prefix}/products/${id}`), COUNTED); // 404
    });
  }

  it('asks for a key exactly where the document says so, with the documented 401', async () => {
    for (const { path, method, op } of operations(c.doc)) {
      const url = path.replace('{id}', 'prod_0000000000000000000000000000');
      for (const authorization of [undefined, 'Basic abc', 'Bearer ph_live_not-a-real-key']) {
        const res = await t.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          headers: authorization ? { authorization } : {},
        });
        if (needsKey(c.doc, op)) {
          assert.equal(res.statusCode, 401, `${method} ${path}`);
          // with the failed-authentication budget of the address in the rate-limit headers
          c.check(method, path, res, COUNTED);
        } else {
          assert.notEqual(res.statusCode, 401, `${method} ${path}`);
        }
      }
    }
  });

  it('answers the public operations as documented', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/v1/openapi.json']) {
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.equal(res.statusCode, 200, path);
      c.check('GET', path, res);
      const again = await t.app.inject({
        method: 'GET',
        url: path,
        headers: { 'if-none-match': res.headers.etag as string },
      });
      if (again.statusCode === 304) c.check('GET', path, again); // /metrics changes between two calls
      // They take no input, so there is nothing to be invalid (no 400 or 422 is documented).
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `${path}?unknown=1` })).statusCode,
        200,
        `${path}?unknown=1`,
      );
    }
  });

  it('answers a method a path does not list with the documented 405 and Allow', async () => {
    const { headers } = await t.newKey();
    for (const [method, url] of [
      ['POST', '/api/v1/products/prod_0000000000000000000000000000'],
      ['DELETE', '/v1/products'],
      ['PUT', '/api/v1/usage'],
      ['POST', '/healthz'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      c.checkComponent('MethodNotAllowed', res);
      const path = url.replace(/prod_0+/, '{id}');
      const listed = Object.keys(c.doc.paths[path] ?? {}).map((m) => m.toUpperCase());
      const allow = String(res.headers.allow).split(', ');
      assert.deepEqual(
        allow.filter((m) => m !== 'HEAD').sort(),
        listed.sort(),
        `${url}: Allow lists the documented methods`,
      );
    }
  });
});

describe('openapi: 429 answers match the document', () => {
  const t = useTestApp({ AUTH_FAILURE_LIMIT: '2' });
  let c: Contract;
  before(async () => {
    c = new Contract(await fetchDocument(t.app));
  });

  it('a key over its hourly limit gets the documented 429 with Retry-After and the rate-limit headers', async () => {
    // A minute into the hour on the app's clock: the window cannot turn during the 1000 requests.
    t.clock.set(hourStart(Date.now()) + MINUTE_MS);
    const { headers } = await t.newKey('free');
    const url = '/api/v1/products/prod_0000000000000000000000000000';
    for (let i = 0; i < 1000; i++) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      if (res.statusCode !== 404) assert.fail(`request ${i + 1}: ${res.statusCode} ${res.body}`);
    }
    const over = await t.app.inject({ method: 'GET', url, headers });
    assert.equal(over.statusCode, 429);
    c.check('GET', '/api/v1/products/{id}', over, { always: [...COUNTED.always, 'retry-after'] });
  });

  it('an address over its failed-authentication budget gets the documented 429', async () => {
    let res;
    for (let i = 0; i < 3; i++)
      res = await t.app.inject({ method: 'GET', url: '/v1/products', headers: { authorization: 'Bearer nope' } });
    assert.equal(res!.statusCode, 429);
    c.check('GET', '/v1/products', res!, { always: [...COUNTED.always, 'retry-after'] });
    assert.equal(res!.headers['x-ratelimit-limit'], '2', 'the failure budget');
    assert.equal(res!.headers['x-ratelimit-remaining'], '0');
  });
});
