import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson, type Page } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, PREFIXES } from '../products/support.js';
import type { ListingCheck } from '../helpers/api-types.js';

const candidate = (price: number, source: string, chosen: boolean, ignored: string | null = null) => ({
  price,
  currency: 'EUR',
  source,
  detail: source === 'json-ld' ? '$.offers.price' : '.price',
  raw: `${price} €`,
  availability: 'in_stock',
  in_stock: true,
  range: null,
  from: false,
  ignored,
  chosen,
});

/**
 * Writes check log rows as the worker does (src/checks records them; the log holds candidates in
 * the API's shape). started_at: `base` minus i minutes for the i-th, so row 0 is the newest.
 */
async function logChecks(t: TestApp, listingId: string, n: number, base = Date.parse('2026-05-01T12:00:00Z')) {
  for (let i = 0; i < n; i++) {
    const ok = i % 3 !== 2;
    await t.rt.db.query(
      `insert into listing_checks (listing_id, started_at, duration_ms, ok, http_status, final_url, price, currency, in_stock, source,
                                   error_code, error, candidates)
       values ($1, $2, 120, $3, $4, 'https://rival.example/p', $5::numeric, $6, $7, $8, $9, $10, $11::jsonb)`,
      [
        listingId,
        new Date(base - (i % 5 === 4 ? i - 1 : i) * 60_000), // some equal start times: ties broken by id
        ok,
        ok ? 200 : 503,
        ok ? '19.99' : null,
        ok ? 'EUR' : null,
        ok ? true : null,
        ok ? 'json-ld' : null,
        ok ? null : 'http_error',
        ok ? null : 'the page answered 503',
        JSON.stringify(ok ? [candidate(19.99, 'json-ld', true), candidate(24.99, 'meta', false, 'a list price')] : []),
      ],
    );
  }
}

describe('listings: check log', () => {
  const t = useTestApp();

  async function listing() {
    const key = await t.newKey();
    const p = await createProduct(t, key.headers);
    const c = await createCompetitor(t, key.headers);
    const l = await createListing(t, key.headers, {
      product_id: p.id,
      competitor_id: c.id,
      url: 'https://rival.example/p',
    });
    return { ...key, l };
  }

  for (const prefix of PREFIXES) {
    it(`lists a listing's checks newest first with every candidate under ${prefix}`, async () => {
      const { headers, l } = await listing();
      assert.deepEqual(await getJson(t, headers, `${prefix}/listings/${l.id}/checks`), {
        data: [],
        pagination: { limit: 20, has_more: false, next_cursor: null },
      });
      await logChecks(t, l.id, 3);
      const page = await getJson<Page<ListingCheck>>(t, headers, `${prefix}/listings/${l.id}/checks`);
      assert.equal(page.data.length, 3);
      const [newest, , failed] = page.data;
      assert.equal(newest!.started_at, '2026-05-01T12:00:00.000Z');
      assert.deepEqual(
        [newest!.object, newest!.listing_id, newest!.ok, newest!.price],
        ['listing_check', l.id, true, 19.99],
      );
      assert.deepEqual(
        newest!.candidates.map((c) => [c.price, c.source, c.chosen, c.ignored]),
        [
          [19.99, 'json-ld', true, null],
          [24.99, 'meta', false, 'a list price'],
        ],
      );
      assert.deepEqual(
        [failed!.ok, failed!.price, failed!.error_code, failed!.candidates],
        [false, null, 'http_error', []],
      );
    });
  }

  it('pages through the log exactly once, filters by outcome, and keeps logs apart', async () => {
    const { headers, l } = await listing();
    const { l: other } = await listing();
    await logChecks(t, l.id, 23);
    await logChecks(t, other.id, 4);
    const all = (await getJson<Page<ListingCheck>>(t, headers, `/api/v1/listings/${l.id}/checks?limit=100`)).data;
    assert.equal(all.length, 23);
    assert.ok(all.every((c) => c.listing_id === l.id));
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1]!, all[i]!];
      // Ties on started_at go by the check's number, which its public id hides (test/hardening/public-ids.test.ts).
      assert.ok(Date.parse(a.started_at) >= Date.parse(b.started_at) && a.id !== b.id, `order at ${i}`);
    }
    const walked: ListingCheck[] = [];
    let cursor: string | null = null;
    do {
      const p: Page<ListingCheck> = await getJson(
        t,
        headers,
        `/api/v1/listings/${l.id}/checks?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      walked.push(...p.data);
      cursor = p.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(
      walked.map((c) => c.id),
      all.map((c) => c.id),
    );
    const failed = (await getJson<Page<ListingCheck>>(t, headers, `/api/v1/listings/${l.id}/checks?ok=false&limit=100`))
      .data;
    assert.deepEqual(
      failed.map((c) => c.id),
      all.filter((c) => !c.ok).map((c) => c.id),
    );
    assert.equal(failed.length, 7);
  });

  it('refuses bad parameters with 422 and mangled or forged cursors with 400, never 500', async () => {
    const { headers, l } = await listing();
    await logChecks(t, l.id, 3);
    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['ok=perhaps', 'ok'],
      ['sort=started_at', 'sort'],
    ] as const) {
      assert.deepEqual(
        fieldsOf(
          expectError(
            await t.app.inject({ method: 'GET', url: `/api/v1/listings/${l.id}/checks?${q}`, headers }),
            422,
            'validation_failed',
          ),
        ),
        [field],
      );
    }
    const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const cursor of [
      'garbage',
      forge(['-started_at', '2026-05-01T12:00:00.000Z', 'abc']),
      forge(['-started_at', '2026-05-01T12:00:00.000Z', '99999999999999999999999']),
      forge(['-started_at', 'yesterday', '5']),
      forge(['-created_at', '2026-05-01T12:00:00.000Z', '5']), // another list's cursor
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/listings/${l.id}/checks?cursor=${encodeURIComponent(cursor)}`,
        headers,
      });
      assert.deepEqual(fieldsOf(expectError(res, 400, 'invalid_request')), ['cursor'], cursor);
    }
  });
});
