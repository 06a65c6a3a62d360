import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, PREFIXES } from '../products/support.js';
import { createCompetitor, createListing, getJson, rowsOf } from './support.js';
import type { Competitor } from '../helpers/api-types.js';

describe('competitors: tenant isolation', () => {
  const t = useTestApp();

  async function twoAccounts() {
    const owner = await t.newKey();
    const other = await t.newKey();
    const secret = await createCompetitor(t, owner.headers, {
      name: 'Secret rival',
      website: 'https://hidden.example',
      notes: 'confidential',
      proxy_url: 'http://u:pw@proxy.example:1',
    });
    const p = await createProduct(t, owner.headers);
    await createListing(t, owner.headers, {
      product_id: p.id,
      competitor_id: secret.id,
      url: 'https://hidden.example/p',
    });
    const mine = await createCompetitor(t, other.headers, { name: 'Mine' });
    return { owner, other, secret, mine };
  }

  for (const prefix of PREFIXES) {
    it(`answers another account's competitor exactly like a missing one under ${prefix}`, async () => {
      const { owner, other, secret } = await twoAccounts();
      const before = await rowsOf(t, 'competitors', owner.accountId);
      const missing = expectError(
        await t.app.inject({
          method: 'GET',
          url: `${prefix}/competitors/comp_0000000000nonexistent000`,
          headers: other.headers,
        }),
        404,
        'not_found',
      );
      const base = `${prefix}/competitors/${secret.id}`;
      for (const [method, url, payload] of [
        ['GET', base, undefined],
        ['GET', `${base}/analysis`, undefined],
        ['GET', `${base}/listings`, undefined],
        ['PUT', base, { name: 'hijacked' }],
        ['PATCH', base, { proxy_url: null }],
        ['DELETE', base, undefined],
      ] as const) {
        const res = await t.app.inject({ method, url, headers: other.headers, ...(payload ? { payload } : {}) });
        const body = expectError(res, 404, 'not_found');
        assert.equal(body.error, missing.error, `${method} ${url}`);
        assert.doesNotMatch(res.body, /Secret|hidden|confidential/);
      }
      assert.deepEqual(await rowsOf(t, 'competitors', owner.accountId), before);
      assert.equal((await getJson<Competitor>(t, owner.headers, base)).listing_count, 1);
    });
  }

  it("never lists or filters in another account's competitors", async () => {
    const { other, mine } = await twoAccounts();
    for (const q of ['', 'limit=100', 'domain=hidden.example', 'q=secret', 'q=confidential', 'sort=name']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/competitors?${q}`, headers: other.headers });
      assert.equal(res.statusCode, 200);
      assert.ok(
        res.json<{ data: Competitor[] }>().data.every((c) => c.id === mine.id),
        q,
      );
      assert.doesNotMatch(res.body, /Secret|hidden/);
    }
  });

  it('needs a key for every competitor route', async () => {
    const { secret } = await twoAccounts();
    for (const [method, url] of [
      ['GET', '/api/v1/competitors'],
      ['POST', '/api/v1/competitors'],
      ['GET', `/api/v1/competitors/${secret.id}`],
      ['PUT', `/api/v1/competitors/${secret.id}`],
      ['PATCH', `/v1/competitors/${secret.id}`],
      ['DELETE', `/api/v1/competitors/${secret.id}`],
      ['GET', `/api/v1/competitors/${secret.id}/analysis`],
      ['GET', `/api/v1/competitors/${secret.id}/listings`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' || method === 'DELETE' ? undefined : '{}',
      });
      expectError(res, 401, 'unauthorized');
    }
  });
});
