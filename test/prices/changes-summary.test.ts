import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, type Headers } from '../products/support.js';
import { at, catalogue, changesOf, ingestOk } from './ingest-support.js';
import type { PriceChangeSummary } from '../helpers/api-types.js';

describe('GET /price-changes/summary and the kind filter of GET /price-changes', () => {
  const t = useTestApp();
  const summary = async (headers: Headers, since: string, prefix = '/api/v1') => {
    const res = await t.app.inject({
      method: 'GET',
      url: `${prefix}/price-changes/summary?since=${encodeURIComponent(since)}`,
      headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<PriceChangeSummary>();
  };

  /**
   * Product P: our price 10 -> 10 -> 12 (up 20 %); competitor A 20 -> 20 out of stock -> 18 back
   * in stock (down 10 %); competitor B 30 -> 30. Product Q: ours 5 EUR -> 5 USD (a currency
   * change); Q at A seen once, before the period. The period starts at hour 3.
   */
  async function movements() {
    const c = await catalogue(t);
    const o = (product: string, competitor: string | null, hours: number, price: number, extra: object = {}) => ({
      product_id: product,
      competitor_id: competitor,
      price,
      currency: 'EUR',
      in_stock: true,
      observed_at: at(hours),
      ...extra,
    });
    const P = c.productId;
    const Q = c.otherProductId;
    await ingestOk(t, c.headers, [
      o(P, null, 0, 10),
      o(P, null, 10, 10),
      o(P, null, 20, 12),
      o(P, c.competitorId, 0, 20),
      o(P, c.competitorId, 5, 20, { in_stock: false }),
      o(P, c.competitorId, 15, 18),
      o(P, c.competitor2Id, 0, 30),
      o(P, c.competitor2Id, 12, 30),
      o(Q, null, 0, 5),
      o(Q, null, 4, 5, { currency: 'USD' }),
      o(Q, c.competitorId, 1, 7),
    ]);
    return c;
  }

  it("counts the period's changes by kind, the mean move, and the series observed with and without a price change", async () => {
    const c = await movements();
    const s = await summary(c.headers, at(3));
    assert.equal(s.object, 'price_change_summary');
    assert.equal(s.since, at(3));
    assert.ok(Math.abs(Date.parse(s.until) - Date.now()) < 60_000, s.until);
    assert.deepEqual(
      { ...s, object: undefined, since: undefined, until: undefined },
      {
        object: undefined,
        since: undefined,
        until: undefined,
        changes: 4, // ours up, A out of stock, A down and back, Q's currency
        up: 1,
        down: 1,
        back_in_stock: 1,
        out_of_stock: 1,
        average_percent: 5, // (+20 - 10) / 2
        series_observed: 4, // P ours, P at A, P at B, Q ours (Q at A was last seen before the period)
        series_unchanged: 1, // P at B
      },
    );
    // A later start leaves the earlier changes out.
    const later = await summary(c.headers, at(16));
    assert.deepEqual(
      [
        later.changes,
        later.up,
        later.down,
        later.back_in_stock,
        later.average_percent,
        later.series_observed,
        later.series_unchanged,
      ],
      [1, 1, 0, 0, 20, 1, 0],
    );
    // Nothing since: zeros and no mean.
    const none = await summary(c.headers, at(100));
    assert.deepEqual(
      [none.changes, none.up, none.average_percent, none.series_observed, none.series_unchanged],
      [0, 0, null, 0, 0],
    );
    // The /v1 alias answers the same.
    assert.deepEqual({ ...(await summary(c.headers, at(3), '/v1')), until: undefined }, { ...s, until: undefined });
  });

  it('each count is the length of the list GET /price-changes?kind= gives for the same period', async () => {
    const c = await movements();
    const s = await summary(c.headers, at(3));
    const since = `&since=${encodeURIComponent(at(3))}`;
    const kinds = {
      up: s.up,
      down: s.down,
      moved: s.up + s.down,
      back_in_stock: s.back_in_stock,
      out_of_stock: s.out_of_stock,
    } as const;
    for (const [kind, n] of Object.entries(kinds)) {
      const list = await changesOf(t, c.headers, `${since}&kind=${kind}`);
      assert.equal(list.length, n, kind);
    }
    const [up] = await changesOf(t, c.headers, `${since}&kind=up`);
    assert.deepEqual(
      [up!.competitor_id, up!.old.price, up!.new.price, up!.change],
      [null, 10, 12, { amount: 2, percent: 20 }],
    );
    const [back] = await changesOf(t, c.headers, `${since}&kind=back_in_stock`);
    assert.deepEqual(
      [back!.competitor_id, back!.old.in_stock, back!.new.in_stock, back!.new.price],
      [c.competitorId, false, true, 18],
    );
    const [out] = await changesOf(t, c.headers, `${since}&kind=out_of_stock`);
    assert.deepEqual([out!.old.in_stock, out!.new.in_stock, out!.change], [true, false, { amount: 0, percent: 0 }]);
    // Without kind, every change of the period, the currency change included.
    assert.equal((await changesOf(t, c.headers, since)).length, s.changes);
    // Kind combines with the other filters.
    assert.equal((await changesOf(t, c.headers, `${since}&kind=moved&competitor_id=own`)).length, 1);
  });

  it("series=own and series=competitors count and list our own and the competitors' changes apart, adding up to both", async () => {
    const c = await movements();
    const since = at(3);
    const q = (series: string) => `${since}&series=${series}`;
    const res = async (series: string) => {
      const r = await t.app.inject({
        method: 'GET',
        url: `/api/v1/price-changes/summary?since=${encodeURIComponent(since)}&series=${series}`,
        headers: c.headers,
      });
      assert.equal(r.statusCode, 200, r.body);
      return r.json<PriceChangeSummary>();
    };
    const [all, own, comp] = [await summary(c.headers, since), await res('own'), await res('competitors')];
    // Ours: P up (10 -> 12) and Q's currency change; series P ours and Q ours, neither unchanged.
    assert.deepEqual(
      [own.changes, own.up, own.down, own.average_percent, own.series_observed, own.series_unchanged],
      [2, 1, 0, 20, 2, 0],
    );
    // The competitors': A out of stock, then down and back; series P at A and P at B (unchanged).
    assert.deepEqual(
      [
        comp.changes,
        comp.up,
        comp.down,
        comp.back_in_stock,
        comp.out_of_stock,
        comp.average_percent,
        comp.series_observed,
        comp.series_unchanged,
      ],
      [2, 0, 1, 1, 1, -10, 2, 1],
    );
    for (const k of [
      'changes',
      'up',
      'down',
      'back_in_stock',
      'out_of_stock',
      'series_observed',
      'series_unchanged',
    ] as const)
      assert.equal(own[k] + comp[k], all[k], k);
    // The lists agree with the counts, and series=own is competitor_id=own.
    const enc = (s: string) => s.replace(since, encodeURIComponent(since));
    const ownList = await changesOf(t, c.headers, `&since=${enc(q('own'))}`);
    assert.deepEqual(
      ownList.map((x) => x.competitor_id),
      [null, null],
    );
    assert.deepEqual(
      ownList.map((x) => x.id),
      (await changesOf(t, c.headers, `&since=${encodeURIComponent(since)}&competitor_id=own`)).map((x) => x.id),
    );
    const compList = await changesOf(t, c.headers, `&since=${enc(q('competitors'))}&kind=down`);
    assert.deepEqual(
      compList.map((x) => x.competitor_id),
      [c.competitorId],
    );
    // A value that is neither: 422 naming the field.
    const bad = expectError(
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/price-changes/summary?since=${encodeURIComponent(since)}&series=mine`,
        headers: c.headers,
      }),
      422,
      'validation_failed',
    );
    assert.ok(JSON.stringify(bad).includes('series'), JSON.stringify(bad));
  });

  it("counts only the calling account's prices", async () => {
    const c = await movements();
    const other = await t.newKey('business');
    const s = await summary(other.headers, at(0));
    assert.deepEqual([s.changes, s.series_observed], [0, 0]);
    assert.equal((await summary(c.headers, at(0))).series_observed, 5);
  });

  it('refuses a missing or malformed since, unknown parameters and an unknown kind (422)', async () => {
    const { headers } = await t.newKey();
    for (const [url, field] of [
      ['/api/v1/price-changes/summary', 'since'],
      ['/api/v1/price-changes/summary?since=yesterday', 'since'],
      ['/api/v1/price-changes/summary?since=2025-03-01T00:00:00Z&until=2025-03-02T00:00:00Z', 'until'],
      ['/api/v1/price-changes?kind=sideways', 'kind'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expectError(res, 422, 'validation_failed');
      assert.ok(
        res.json<{ details: { field: string }[] }>().details.some((d) => d.field === field),
        `${url}: ${res.body}`,
      );
    }
  });
});
