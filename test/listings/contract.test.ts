import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { setListingState } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { Contract, fetchDocument } from '../openapi/support.js';

/**
 * Real answers of every competitors and listings operation, through the real HTTP pipeline,
 * checked against the OpenAPI document: status documented, body valid against the documented
 * schema, documented headers present and sent headers documented.
 */

const COUNTED = { always: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] };
const REPLAYED = { always: [...COUNTED.always, 'idempotent-replayed'] };

describe('openapi: competitors and listings answer as documented', () => {
  const t = useTestApp();
  let c: Contract;
  before(async () => {
    c = new Contract(await fetchDocument(t.app));
  });

  for (const prefix of ['/api/v1', '/v1']) {
    it(`every operation under ${prefix}`, async () => {
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
      const ok = async (
        method: string,
        path: string,
        url: string,
        status: number,
        extra: { payload?: unknown; headers?: Record<string, string> } = {},
      ) => {
        const res = await inject(method, url, extra);
        assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
        c.check(method, path, res, COUNTED);
        return res;
      };

      const product = (
        await inject('POST', `${prefix}/products`, {
          payload: { name: 'Kettle', base_price: 20, currency: 'EUR', url: 'https://our.example/k' },
        })
      ).json<{ id: string }>();

      // Competitors
      const comps = `${prefix}/competitors`;
      const comp = `${comps}/{id}`;
      const body = { name: 'Rival', website: 'https://www.rival.example', proxy_url: 'http://u:p@proxy.example:3128' };
      const created = await ok('POST', comps, comps, 201, {
        payload: body,
        headers: { 'idempotency-key': `c-${prefix}` },
      });
      const cid = created.json<{ id: string }>().id;
      c.check(
        'POST',
        comps,
        await inject('POST', comps, { payload: body, headers: { 'idempotency-key': `c-${prefix}` } }),
        REPLAYED,
      );
      await ok('POST', comps, comps, 422, { payload: { name: 'x' } });
      await ok('POST', comps, comps, 400, { payload: '{"name":' });
      await ok('POST', comps, comps, 415, { payload: 'x', headers: { 'content-type': 'text/plain' } });
      await ok('POST', comps, comps, 413, { payload: { ...body, notes: 'x'.repeat(1_100_000) } });
      await ok('GET', comps, `${comps}?sort=name&limit=1`, 200);
      await ok('GET', comps, `${comps}?domain=a/b`, 422);
      await ok('GET', comps, `${comps}?cursor=bm90IGEgY3Vyc29y`, 400);
      const got = await ok('GET', comp, `${comps}/${cid}`, 200);
      await ok('GET', comp, `${comps}/${cid}`, 304, { headers: { 'if-none-match': got.headers.etag as string } });
      await ok('GET', comp, `${comps}/comp_00000000000000000000000000`, 404);
      for (const method of ['PUT', 'PATCH']) {
        await ok(method, comp, `${comps}/${cid}`, 200, { payload: { notes: method } });
        await ok(method, comp, `${comps}/${cid}`, 422, { payload: { website: 'nope' } });
        await ok(method, comp, `${comps}/comp_00000000000000000000000000`, 404, { payload: { notes: 'x' } });
      }
      await ok('GET', `${comp}/analysis`, `${comps}/${cid}/analysis`, 200);
      await ok('GET', `${comp}/analysis`, `${comps}/comp_00000000000000000000000000/analysis`, 404);

      // Listings
      const lists = `${prefix}/listings`;
      const one = `${lists}/{id}`;
      const lbody = {
        product_id: product.id,
        competitor_id: cid,
        url: 'https://elsewhere.example/k',
        selector: '.price',
      };
      const lres = await ok('POST', lists, lists, 201, {
        payload: lbody,
        headers: { 'idempotency-key': `l-${prefix}` },
      });
      const listing = lres.json<{ id: string; warnings: unknown[] }>();
      assert.equal(listing.warnings.length, 1, 'domain_mismatch is documented too');
      c.check(
        'POST',
        lists,
        await inject('POST', lists, { payload: lbody, headers: { 'idempotency-key': `l-${prefix}` } }),
        REPLAYED,
      );
      await ok('POST', lists, lists, 409, { payload: lbody });
      await ok('POST', lists, lists, 422, {
        payload: { ...lbody, selector: 'p::before', url: 'https://rival.example/2' },
      });
      await ok('POST', lists, lists, 422, { payload: { product_id: 'prod_00000000000000000000000000' } });
      const own = await ok('POST', lists, lists, 201, { payload: { product_id: product.id } });
      await setListingState(t, own.json<{ id: string }>().id, { price: 19.5, currency: 'EUR', in_stock: true });
      await setListingState(t, listing.id, {
        price: null,
        status: 'flagged',
        error: 'the page answered 404',
        failures: 5,
      });
      await ok('GET', lists, `${lists}?own=false&limit=1`, 200);
      await ok('GET', lists, `${lists}?own=maybe`, 422);
      await ok('GET', lists, `${lists}?cursor=bm90IGEgY3Vyc29y`, 400);
      const lgot = await ok('GET', one, `${lists}/${listing.id}`, 200);
      await ok('GET', one, `${lists}/${listing.id}`, 304, {
        headers: { 'if-none-match': lgot.headers.etag as string },
      });
      await ok('GET', one, `${lists}/lst_00000000000000000000000000`, 404);
      for (const method of ['PUT', 'PATCH']) {
        await ok(method, one, `${lists}/${listing.id}`, 200, { payload: { enabled: method === 'PUT' } });
        await ok(method, one, `${lists}/${listing.id}`, 422, { payload: { product_id: product.id } });
        await ok(method, one, `${lists}/${listing.id}`, 409, { payload: { url: 'https://our.example/k' } });
        await ok(method, one, `${lists}/lst_00000000000000000000000000`, 404, { payload: { enabled: true } });
      }
      const byProduct = `${prefix}/products/{id}/listings`;
      await ok('GET', byProduct, `${prefix}/products/${product.id}/listings`, 200);
      await ok('GET', byProduct, `${prefix}/products/prod_00000000000000000000000000/listings`, 404);
      await ok('GET', byProduct, `${prefix}/products/${product.id}/listings?status=nope`, 422);
      const byCompetitor = `${prefix}/competitors/{id}/listings`;
      await ok('GET', byCompetitor, `${prefix}/competitors/${cid}/listings`, 200);
      await ok('GET', byCompetitor, `${prefix}/competitors/comp_00000000000000000000000000/listings`, 404);
      const checks = `${one}/checks`;
      await t.rt.db.query(
        `insert into listing_checks (listing_id, started_at, duration_ms, ok, http_status, error_code, error)
         values ($1, now(), 80, false, 404, 'http_error', 'the page answered 404')`,
        [listing.id],
      );
      const log = await ok('GET', checks, `${lists}/${listing.id}/checks`, 200);
      assert.equal(log.json<{ data: unknown[] }>().data.length, 1);
      await ok('GET', checks, `${lists}/lst_00000000000000000000000000/checks`, 404);
      await ok('GET', checks, `${lists}/${listing.id}/checks?ok=1`, 422);

      // The product now carries its monitoring summary, as documented.
      const p = await ok('GET', `${prefix}/products/{id}`, `${prefix}/products/${product.id}`, 200);
      assert.equal(p.json<{ monitoring: { listing_count: number } }>().monitoring.listing_count, 2);

      await ok('DELETE', one, `${lists}/${listing.id}`, 204);
      await ok('DELETE', one, `${lists}/${listing.id}`, 404);
      await ok('DELETE', comp, `${comps}/${cid}`, 204);
      await ok('DELETE', comp, `${comps}/${cid}`, 404);
    });
  }
});
