import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson, type Page, setListingState } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, type Headers, PREFIXES } from '../products/support.js';
import type { Listing } from '../helpers/api-types.js';

async function walk(t: TestApp, headers: Headers, path: string, query: string, limit: number) {
  const items: Listing[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', String(limit));
    if (cursor) q.set('cursor', cursor);
    const p = await getJson<Page<Listing>>(t, headers, `${path}?${q}`);
    if (p.pagination.has_more) assert.equal(p.data.length, limit);
    items.push(...p.data);
    cursor = p.pagination.next_cursor;
    assert.ok(++pages < 100);
  } while (cursor);
  return items;
}

describe('listings: lists and filters', () => {
  const t = useTestApp();

  /** Two products, two competitors, our own pages, in every state. */
  async function world() {
    const key = await t.newKey();
    const { headers } = key;
    const p1 = await createProduct(t, headers, { name: 'p1', url: 'https://our.example/p1' });
    const p2 = await createProduct(t, headers, { name: 'p2', url: 'https://our.example/p2' });
    const c1 = await createCompetitor(t, headers, { name: 'c1', website: 'https://c1.example' });
    const c2 = await createCompetitor(t, headers, { name: 'c2', website: 'https://c2.example' });
    const l = {
      p1c1: await createListing(t, headers, { product_id: p1.id, competitor_id: c1.id, url: 'https://c1.example/p1' }),
      p1c2: await createListing(t, headers, {
        product_id: p1.id,
        competitor_id: c2.id,
        url: 'https://c2.example/p1',
        enabled: false,
      }),
      p2c1: await createListing(t, headers, { product_id: p2.id, competitor_id: c1.id, url: 'https://c1.example/p2' }),
      p1own: await createListing(t, headers, { product_id: p1.id }),
      p2own: await createListing(t, headers, { product_id: p2.id }),
    };
    await setListingState(t, l.p1c1.id, { price: 10, currency: 'USD' });
    await setListingState(t, l.p2c1.id, { price: null, status: 'flagged', error: 'gone', failures: 5 });
    await setListingState(t, l.p2own.id, { price: null, status: 'failing', error: 'timeout', failures: 1 });
    return { ...key, p1, p2, c1, c2, l };
  }

  const ids = (p: Page<Listing>) => p.data.map((x) => x.id).sort();

  it('filters by product, competitor, own, status and enabled, alone and combined', async () => {
    const { headers, p1, p2, c1, c2, l } = await world();
    const q = async (query: string) => ids(await getJson<Page<Listing>>(t, headers, `/api/v1/listings?${query}`));
    const sorted = (...xs: Listing[]) => xs.map((x) => x.id).sort();
    assert.deepEqual(await q(''), sorted(...Object.values(l)));
    assert.deepEqual(await q(`product_id=${p1.id}`), sorted(l.p1c1, l.p1c2, l.p1own));
    assert.deepEqual(await q(`competitor_id=${c1.id}`), sorted(l.p1c1, l.p2c1));
    assert.deepEqual(await q(`competitor_id=${c2.id}&product_id=${p2.id}`), []);
    assert.deepEqual(await q('own=true'), sorted(l.p1own, l.p2own));
    assert.deepEqual(await q('own=false'), sorted(l.p1c1, l.p1c2, l.p2c1));
    assert.deepEqual(await q(`own=false&product_id=${p2.id}`), sorted(l.p2c1));
    assert.deepEqual(await q('status=ok'), sorted(l.p1c1));
    assert.deepEqual(await q('status=flagged'), sorted(l.p2c1));
    assert.deepEqual(await q('status=failing'), sorted(l.p2own));
    assert.deepEqual(await q('status=pending'), sorted(l.p1c2, l.p1own));
    assert.deepEqual(await q('enabled=false'), sorted(l.p1c2));
    assert.deepEqual(await q('enabled=true&status=pending'), sorted(l.p1own));
    assert.deepEqual(await q(`created_after=${encodeURIComponent(l.p2own.created_at)}`), sorted(l.p2own));
    assert.deepEqual(await q('product_id=prod_0000000000nonexistent0000'), []);
  });

  for (const prefix of PREFIXES) {
    it(`lists a product's and a competitor's listings under ${prefix}`, async () => {
      const { headers, p1, p2, c1, c2, l } = await world();
      const of = async (path: string) => ids(await getJson<Page<Listing>>(t, headers, `${prefix}${path}`));
      const sorted = (...xs: Listing[]) => xs.map((x) => x.id).sort();
      assert.deepEqual(await of(`/products/${p1.id}/listings`), sorted(l.p1c1, l.p1c2, l.p1own));
      assert.deepEqual(await of(`/products/${p1.id}/listings?own=true`), sorted(l.p1own));
      assert.deepEqual(await of(`/products/${p1.id}/listings?competitor_id=${c2.id}`), sorted(l.p1c2));
      assert.deepEqual(await of(`/products/${p2.id}/listings?status=flagged`), sorted(l.p2c1));
      assert.deepEqual(await of(`/competitors/${c1.id}/listings`), sorted(l.p1c1, l.p2c1));
      assert.deepEqual(await of(`/competitors/${c1.id}/listings?product_id=${p2.id}`), sorted(l.p2c1));
      assert.deepEqual(await of(`/competitors/${c2.id}/listings?enabled=true`), []);
      // A product or competitor without listings is an empty page, not a 404.
      const lonely = await createProduct(t, headers);
      assert.deepEqual(await getJson(t, headers, `${prefix}/products/${lonely.id}/listings`), {
        data: [],
        pagination: { limit: 20, has_more: false, next_cursor: null },
      });
      const quiet = await createCompetitor(t, headers);
      assert.deepEqual(
        (await getJson<Page<Listing>>(t, headers, `${prefix}/competitors/${quiet.id}/listings`)).data,
        [],
      );
    });
  }

  it('walks every sort exactly once, in order, on every list', async () => {
    const { headers, p1, c1 } = await world();
    for (let i = 0; i < 9; i++)
      await createListing(t, headers, {
        product_id: p1.id,
        competitor_id: c1.id,
        url: `https://c1.example/extra/${i}`,
      });
    // Some schedule ties and some updates, so every sort has ties and differs from the others.
    await t.rt.db.query(
      `update listings set next_check_at = '2030-01-01T00:00:00Z' where url like '%/extra/1%' or url like '%/extra/3%'`,
    );
    const touched = await getJson<Page<Listing>>(t, headers, `/api/v1/listings?limit=3&sort=created_at`);
    for (const x of touched.data)
      await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${x.id}`, headers, payload: { render_js: true } });
    for (const path of [
      '/api/v1/listings',
      `/api/v1/products/${p1.id}/listings`,
      `/api/v1/competitors/${c1.id}/listings`,
    ]) {
      for (const field of ['created_at', 'updated_at', 'next_check_at'] as const) {
        for (const sort of [field, `-${field}`]) {
          const all = (await getJson<Page<Listing>>(t, headers, `${path}?sort=${sort}&limit=100`)).data;
          const stored = new Map(
            (
              await t.rt.db.query<{ id: string; next_check_at: Date }>(
                'select id, next_check_at from listings where id = any($1)',
                [all.map((x) => x.id)],
              )
            ).rows.map((r) => [r.id, r.next_check_at.getTime()]),
          );
          const key = (x: Listing) => (field === 'next_check_at' ? stored.get(x.id)! : Date.parse(x[field]));
          for (let i = 1; i < all.length; i++) {
            const c = key(all[i - 1]!) - key(all[i]!) || (all[i - 1]!.id < all[i]!.id ? -1 : 1);
            assert.ok(sort.startsWith('-') ? c > 0 : c < 0, `${path} ${sort} out of order at ${i}`);
          }
          const walked = await walk(t, headers, path, `sort=${sort}`, 4);
          assert.deepEqual(
            walked.map((x) => x.id),
            all.map((x) => x.id),
            `${path} ${sort}`,
          );
        }
      }
    }
  });

  it('refuses bad filters with 422 and bad cursors with 400, never 500', async () => {
    const { headers, p1, c1 } = await world();
    const cases: [string, string, string][] = [
      ['/api/v1/listings', 'own=maybe', 'own'],
      ['/api/v1/listings', 'enabled=1', 'enabled'],
      ['/api/v1/listings', 'status=broken', 'status'],
      ['/api/v1/listings', 'product_id=comp_x', 'product_id'],
      ['/api/v1/listings', 'competitor_id=%00', 'competitor_id'],
      ['/api/v1/listings', 'sort=last_price', 'sort'],
      ['/api/v1/listings', 'limit=0', 'limit'],
      ['/api/v1/listings', `own=true&competitor_id=${c1.id}`, 'own'],
      ['/api/v1/listings', 'created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
      ['/api/v1/listings', 'url=x', 'url'],
      [`/api/v1/products/${p1.id}/listings`, 'product_id=prod_x', 'product_id'],
      [`/api/v1/products/${p1.id}/listings`, `own=true&competitor_id=${c1.id}`, 'own'],
      [`/api/v1/competitors/${c1.id}/listings`, 'own=true', 'own'],
      [`/api/v1/competitors/${c1.id}/listings`, `competitor_id=${c1.id}`, 'competitor_id'],
    ];
    for (const [path, q, field] of cases) {
      const res = await t.app.inject({ method: 'GET', url: `${path}?${q}`, headers });
      assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), [field], `${path}?${q}`);
    }
    const next = (await getJson<Page<Listing>>(t, headers, '/api/v1/listings?limit=1&sort=next_check_at')).pagination
      .next_cursor!;
    const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const [q, cursor] of [
      ['sort=created_at', next],
      ['', 'garbage'],
      ['sort=next_check_at', forge(['next_check_at', 'soon', 'lst_x'])],
      ['', forge(['-created_at', 5, 'lst_x'])],
    ] as const) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/listings?${q}&cursor=${encodeURIComponent(cursor)}`,
        headers,
      });
      assert.deepEqual(fieldsOf(expectError(res, 400, 'invalid_request')), ['cursor'], `${q} ${cursor}`);
    }
  });
});
