import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf } from '../products/support.js';
import { catalogue, createAlert, rule } from './rules-support.js';
import type { Alert, Page } from '../helpers/api-types.js';

type AlertPage = Page<Alert>;

describe('alert rules: the list', () => {
  const t = useTestApp();

  it('filters by enabled, product, competitor, listing and condition type; newest first', async () => {
    const { headers } = await t.newKey();
    const { product, competitor, listing } = await catalogue(t, headers);
    const a = await createAlert(t, headers, rule({ name: 'a', product_id: product.id }));
    const b = await createAlert(
      t,
      headers,
      rule({ name: 'b', competitor_id: competitor.id, condition: { type: 'price_drop', percent: 3 }, enabled: false }),
    );
    const c = await createAlert(
      t,
      headers,
      rule({ name: 'c', listing_id: listing.id, condition: { type: 'listing_failing' } }),
    );
    const d = await createAlert(t, headers, rule({ name: 'd' }));
    const ids = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/alerts${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<AlertPage>().data.map((r) => r.name);
    };
    assert.deepEqual(await ids(''), ['d', 'c', 'b', 'a']);
    assert.deepEqual(await ids('?sort=created_at'), ['a', 'b', 'c', 'd']);
    assert.deepEqual(await ids('?sort=-name'), ['d', 'c', 'b', 'a']);
    assert.deepEqual(await ids('?enabled=false'), ['b']);
    assert.deepEqual(await ids('?enabled=true'), ['d', 'c', 'a']);
    assert.deepEqual(await ids(`?product_id=${product.id}`), ['c', 'a']);
    assert.deepEqual(await ids(`?competitor_id=${competitor.id}`), ['c', 'b']);
    assert.deepEqual(await ids(`?listing_id=${listing.id}`), ['c']);
    assert.deepEqual(await ids('?condition_type=price_below'), ['d', 'a']);
    assert.deepEqual(await ids(`?condition_type=price_below&product_id=${product.id}`), ['a']);
    assert.deepEqual(await ids('?product_id=prod_nothere'), []);
    void [a, b, c, d];
  });

  it('pages with the list toolkit: limit, cursor, has_more', async () => {
    const { headers } = await t.newKey();
    for (let i = 0; i < 5; i++) await createAlert(t, headers, rule({ name: `r${i}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { json<T>(): T } = await t.app.inject({
        method: 'GET',
        url: `/api/v1/alerts?limit=2&sort=created_at${cursor ? `&cursor=${cursor}` : ''}`,
        headers,
      });
      const page: AlertPage = res.json<AlertPage>();
      assert.equal(page.pagination.limit, 2);
      seen.push(...page.data.map((r) => r.name));
      cursor = page.pagination.next_cursor;
      assert.equal(page.pagination.has_more, cursor !== null);
      pages++;
    } while (cursor);
    assert.deepEqual(seen, ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.equal(pages, 3);
    const first = (await t.app.inject({ method: 'GET', url: '/api/v1/alerts?limit=2', headers })).json<AlertPage>();
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/alerts?sort=name&cursor=${first.pagination.next_cursor}`,
        headers,
      }),
      400,
      'invalid_request',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/alerts?cursor=garbage', headers }),
      400,
      'invalid_request',
    );
  });

  it('refuses bad filters with a 422 naming them', async () => {
    const { headers } = await t.newKey();
    for (const [query, field] of [
      ['enabled=maybe', 'enabled'],
      ['condition_type=price_crash', 'condition_type'],
      ['product_id=comp_x', 'product_id'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['sort=threshold', 'sort'],
      ['colour=red', 'colour'],
    ] as const) {
      const body = expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/alerts?${query}`, headers }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), [field], query);
    }
  });
});
