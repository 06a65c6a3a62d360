import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf } from '../products/support.js';
import { catalogue, createAlert, rule } from './rules-support.js';
import type { Alert } from '../helpers/api-types.js';

describe('alert rules: scope and other accounts', () => {
  const t = useTestApp();

  it('a listing fills in its product and competitor; an inconsistent one is refused', async () => {
    const { headers } = await t.newKey();
    const { product, competitor, listing, ownListing } = await catalogue(t, headers);
    const a = await createAlert(t, headers, rule({ listing_id: listing.id }));
    assert.deepEqual([a.product_id, a.competitor_id, a.listing_id], [product.id, competitor.id, listing.id]);
    const same = await createAlert(
      t,
      headers,
      rule({ listing_id: listing.id, product_id: product.id, competitor_id: null }),
    );
    assert.deepEqual([same.product_id, same.competitor_id], [product.id, competitor.id]);

    const other = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'Other', base_price: 1, currency: 'EUR' },
    });
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers,
      payload: rule({ listing_id: listing.id, product_id: other.json<{ id: string }>().id }),
    });
    assert.deepEqual(fieldsOf(expectError(bad, 422, 'validation_failed')), ['product_id']);

    const ownRule = await createAlert(
      t,
      headers,
      rule({ listing_id: ownListing.id, condition: { type: 'price_above', threshold: 60, series: 'own' } }),
    );
    assert.deepEqual([ownRule.product_id, ownRule.competitor_id], [product.id, null]);
    const ownCompetitors = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers,
      payload: rule({ listing_id: ownListing.id }),
    });
    assert.deepEqual(fieldsOf(expectError(ownCompetitors, 422, 'validation_failed')), ['listing_id']);
    const ownUndercut = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers,
      payload: rule({ listing_id: ownListing.id, condition: { type: 'undercut' } }),
    });
    assert.deepEqual(fieldsOf(expectError(ownUndercut, 422, 'validation_failed')), ['listing_id']);
    const compOwn = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers,
      payload: rule({ listing_id: listing.id, condition: { type: 'back_in_stock', series: 'own' } }),
    });
    assert.deepEqual(fieldsOf(expectError(compOwn, 422, 'validation_failed')), ['listing_id']);
    const failing = await createAlert(
      t,
      headers,
      rule({ listing_id: ownListing.id, condition: { type: 'listing_failing' } }),
    );
    assert.equal(failing.listing_id, ownListing.id);

    // Moving a rule to another listing moves its product and competitor with it.
    const moved = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${failing.id}`,
      headers,
      payload: { listing_id: listing.id },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([moved.json<Alert>().product_id, moved.json<Alert>().competitor_id], [product.id, competitor.id]);
    const clash = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${failing.id}`,
      headers,
      payload: { competitor_id: null, product_id: other.json<{ id: string }>().id },
    });
    assert.deepEqual(fieldsOf(expectError(clash, 422, 'validation_failed')), ['product_id']);
  });

  it('refuses scope ids that do not exist or belong to another account, in the same words', async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const their = await catalogue(t, theirs.headers);
    const cases: [Record<string, unknown>, string][] = [
      [{ product_id: their.product.id }, 'product_id'],
      [{ competitor_id: their.competitor.id }, 'competitor_id'],
      [{ listing_id: their.listing.id }, 'listing_id'],
      [{ product_id: 'prod_00000000000000000000000000' }, 'product_id'],
      [{ competitor_id: 'comp_nothere' }, 'competitor_id'],
      [{ listing_id: 'lst_nothere' }, 'listing_id'],
    ];
    const messages = new Map<string, string[]>();
    for (const [scope, field] of cases) {
      const body = expectError(
        await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers: mine.headers, payload: rule(scope) }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), [field]);
      messages.set(field, [...(messages.get(field) ?? []), body.details![0]!.message]);
      assert.doesNotMatch(
        JSON.stringify(body),
        new RegExp(their.product.id),
        'nothing about the other account comes back',
      );
    }
    for (const [field, texts] of messages)
      assert.equal(new Set(texts).size, 1, `${field}: a foreign id reads as a missing one`);
    const a = await createAlert(t, mine.headers);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers: mine.headers,
      payload: { product_id: their.product.id },
    });
    assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['product_id']);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers: mine.headers })).json<{ data: unknown[] }>()
        .data.length,
      1,
    );
  });

  it("another account's rule is a 404 everywhere, and nothing of it changes", async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const their = await createAlert(t, theirs.headers);
    for (const prefix of ['/api/v1', '/v1']) {
      const url = `${prefix}/alerts/${their.id}`;
      expectError(await t.app.inject({ method: 'GET', url, headers: mine.headers }), 404, 'not_found');
      expectError(
        await t.app.inject({ method: 'PUT', url, headers: mine.headers, payload: { name: 'mine now' } }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({ method: 'PATCH', url, headers: mine.headers, payload: { enabled: false } }),
        404,
        'not_found',
      );
      expectError(await t.app.inject({ method: 'DELETE', url, headers: mine.headers }), 404, 'not_found');
      expectError(await t.app.inject({ method: 'POST', url: `${url}/test`, headers: mine.headers }), 404, 'not_found');
    }
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/api/v1/alerts/alrt_00000000000000000000000000',
      headers: mine.headers,
    });
    const foreign = await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${their.id}`, headers: mine.headers });
    assert.equal(expectError(unknown, 404, 'not_found').error, expectError(foreign, 404, 'not_found').error);
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/alerts/not-an-id', headers: mine.headers }),
      404,
      'not_found',
    );
    assert.deepEqual(
      (await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${their.id}`, headers: theirs.headers })).json(),
      their,
    );
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers: mine.headers })).json<{
      data: unknown[];
    }>();
    assert.equal(listed.data.length, 0);
  });

  it('needs an API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/alerts' });
    expectError(res, 401, 'unauthorized');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers: { 'content-type': 'application/json' },
        payload: rule(),
      }),
      401,
      'unauthorized',
    );
  });
});
