import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import { internalId, SequenceIds } from '../../src/ids.js';
import { testStorage } from '../helpers/database.js';
import { loadIdKey } from '../../src/db/id-key.js';
import { openDatabase } from '../../src/db/open.js';
import { migrate } from '../../src/db/migrate.js';
import { loadConfig } from '../../src/config.js';
import { useMonitoringTest } from '../jobs/support.js';

import type { PriceChange, PriceObservationBatchResult } from '../helpers/api-types.js';

/** Issue 12 item 8: ids of sequences (observations, changes, checks) say nothing about other accounts. */

const PUBLIC = (prefix: string) => new RegExp(`^${prefix}_[0-7][0-9a-hjkmnp-tv-z]{25}$`);
const t = useMonitoringTest();
const T = { timeout: 30_000 };

const cursorJson = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
const forge = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
/** The same id with one base32 digit changed. */
const tamper = (id: string) => id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');

async function account() {
  const k = await t.newKey('business');
  const product = await t.app.inject({
    method: 'POST',
    url: '/api/v1/products',
    headers: k.headers,
    payload: { name: 'Kettle', base_price: 50, currency: 'EUR' },
  });
  assert.equal(product.statusCode, 201, product.body);
  return { headers: k.headers, productId: product.json<{ id: string }>().id };
}

async function ingest(headers: Record<string, string>, productId: string, prices: number[]) {
  const observations = prices.map((price, i) => ({
    product_id: productId,
    price,
    currency: 'EUR',
    observed_at: new Date(Date.UTC(2025, 1, 1, i)).toISOString(),
  }));
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/prices', headers, payload: { observations } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<PriceObservationBatchResult>().data.map((r) => r.observation!.id);
}

describe('public ids of sequences', () => {
  it('are a keyed permutation: round trip, another key or kind or a changed digit decodes to nothing', () => {
    const a = new SequenceIds(crypto.randomBytes(16));
    const b = new SequenceIds(crypto.randomBytes(16));
    for (const n of [1, 2, 7, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const id = a.encode('obs', n);
      assert.match(id, PUBLIC('obs'));
      assert.equal(a.decode('obs', id), String(n));
      assert.notEqual(b.encode('obs', n), id, 'two deployments give the same number different ids');
      assert.equal(b.decode('obs', id), null);
      assert.equal(a.decode('pchg', `pchg_${id.slice(4)}`), null, 'an observation id is no change id');
      assert.equal(a.decode('obs', tamper(id)), null);
    }
    const ids = [1, 2, 3, 4, 5, 6, 7].map((n) => a.encode('chk', n));
    assert.equal(
      new Set(ids.map((id) => id.slice(4, 8))).size > 1,
      true,
      'consecutive numbers share no visible prefix',
    );
    for (const bad of [
      'obs_7',
      'obs_',
      'obs_' + 'z'.repeat(26),
      'obs_' + '0'.repeat(27),
      'OBS_' + a.encode('obs', 1).slice(4).toUpperCase(),
      '',
      7,
      null,
    ]) {
      assert.equal(a.decode('obs', bad), null, String(bad));
    }
  });

  it('the key is made once per deployment and kept: a second start reads the same one', T, async () => {
    const storage = await testStorage();
    try {
      const db = await openDatabase(loadConfig(storage.env));
      try {
        await migrate(db);
        const [first, second] = await Promise.all([loadIdKey(db), loadIdKey(db)]);
        assert.equal(first.length, 16);
        assert.deepEqual(second, first);
        assert.deepEqual(await loadIdKey(db), first);
        const ours = await loadIdKey(t.rt.db);
        assert.notDeepEqual(ours, first, 'a fresh deployment has a key of its own');
        assert.notEqual(new SequenceIds(ours).encode('obs', 1), new SequenceIds(first).encode('obs', 1));
      } finally {
        await db.close();
      }
    } finally {
      await storage.cleanup();
    }
  });

  it("account B's first observation does not show account A's six", T, async () => {
    const a = await account();
    const b = await account();
    const aIds = await ingest(a.headers, a.productId, [10, 11, 12, 13, 14, 15]);
    const [bFirst] = await ingest(b.headers, b.productId, [20]);
    for (const id of [...aIds, bFirst!]) assert.match(id, PUBLIC('obs'));
    assert.notEqual(bFirst, 'obs_7');
    // Behind them the numbers are consecutive: only the key tells.
    const numbers = [...aIds, bFirst!].map((id) => Number(internalId('obs', id)));
    for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[0]! + i);
    assert.equal(new SequenceIds(crypto.randomBytes(16)).decode('obs', bFirst), null);
  });

  it('changes, their events and the change list cursor carry public ids that round trip', T, async () => {
    const a = await account();
    const obs = await ingest(a.headers, a.productId, [10, 11, 12, 13]);
    const seen: PriceChange[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof t.app.inject>> = await t.app.inject({
        method: 'GET',
        url: `/api/v1/price-changes?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        headers: a.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: PriceChange[]; pagination: { next_cursor: string | null } }>();
      seen.push(...page.data);
      cursor = page.pagination.next_cursor;
      if (cursor) {
        const [, value, id] = cursorJson(cursor);
        assert.match(String(value), PUBLIC('pchg'), 'the cursor holds no bare number');
        assert.match(String(id), PUBLIC('pchg'));
        const bad = await t.app.inject({
          method: 'GET',
          url: `/api/v1/price-changes?cursor=${forge(['-id', tamper(String(value)), id])}`,
          headers: a.headers,
        });
        assert.equal(bad.statusCode, 400, bad.body);
        const bare = await t.app.inject({
          method: 'GET',
          url: `/api/v1/price-changes?cursor=${forge(['-id', '3', id])}`,
          headers: a.headers,
        });
        assert.equal(bare.statusCode, 400, bare.body);
      }
    } while (cursor);
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen.map((c) => c.id)).size, 3);
    assert.deepEqual(
      seen.map((c) => c.observation_id),
      [obs[3], obs[2], obs[1]],
    );
    for (const c of seen) assert.match(c.id, PUBLIC('pchg'));

    const events = await t.app.inject({
      method: 'GET',
      url: '/api/v1/events?type=price.changed&limit=100',
      headers: a.headers,
    });
    assert.equal(events.statusCode, 200, events.body);
    const data = events.json<{ data: { data: { id: string; observation_id: string } }[] }>().data.map((e) => e.data);
    assert.deepEqual(new Set(data.map((d) => d.id)), new Set(seen.map((c) => c.id)));
    for (const d of data) assert.match(d.observation_id, PUBLIC('obs'));
  });

  it('raw history pages and the CSV export carry public observation ids; a forged cursor is a 400', T, async () => {
    const a = await account();
    const obs = await ingest(a.headers, a.productId, [10, 11, 12]);
    const url = `/api/v1/products/${a.productId}/prices?interval=raw&from=2025-02-01T00:00:00Z&to=2025-02-02T00:00:00Z`;
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof t.app.inject>> = await t.app.inject({
        method: 'GET',
        url: `${url}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        headers: a.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: { id: string }[]; pagination: { next_cursor: string | null } }>();
      ids.push(...page.data.map((o) => o.id));
      cursor = page.pagination.next_cursor;
      if (cursor) {
        const [sort, value, id] = cursorJson(cursor);
        assert.match(String(id), PUBLIC('obs'));
        for (const forged of [tamper(String(id)), '1', `pchg_${String(id).slice(4)}`]) {
          const bad = await t.app.inject({
            method: 'GET',
            url: `${url}&cursor=${forge([sort, value, forged])}`,
            headers: a.headers,
          });
          assert.equal(bad.statusCode, 400, bad.body);
        }
      }
    } while (cursor);
    assert.deepEqual(ids, obs);
    const csv = await t.app.inject({
      method: 'GET',
      url: `/api/v1/products/${a.productId}/prices.csv?interval=raw&from=2025-02-01T00:00:00Z&to=2025-02-02T00:00:00Z`,
      headers: a.headers,
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const csvIds = csv.body
      .trim()
      .split(/\r?\n/)
      .slice(1)
      .map((line) => line.split(',').at(-1));
    assert.deepEqual(csvIds, obs);
  });

  it(
    'checks: the check-now answer, the check log with its cursor and listing.check_failed carry chk_ ids',
    T,
    async () => {
      const a = await account();
      const listing = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers: a.headers,
        payload: { product_id: a.productId, url: `${t.site.url}/status/404` },
      });
      assert.equal(listing.statusCode, 201, listing.body);
      const listingId = listing.json<{ id: string }>().id;
      const made: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/v1/listings/${listingId}/check`,
          headers: a.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        const check = res.json<CheckResult>();
        assert.match(check.id, PUBLIC('chk'));
        assert.equal(check.ok, false);
        made.push(check.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Awaited<ReturnType<typeof t.app.inject>> = await t.app.inject({
          method: 'GET',
          url: `/api/v1/listings/${listingId}/checks?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          headers: a.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        const page = res.json<{ data: CheckResult[]; pagination: { next_cursor: string | null } }>();
        seen.push(...page.data.map((c) => c.id));
        cursor = page.pagination.next_cursor;
        if (cursor) {
          const [sort, value, id] = cursorJson(cursor);
          assert.match(String(id), PUBLIC('chk'));
          for (const forged of [tamper(String(id)), '1', '99999999999999999999']) {
            const bad = await t.app.inject({
              method: 'GET',
              url: `/api/v1/listings/${listingId}/checks?cursor=${forge([sort, value, forged])}`,
              headers: a.headers,
            });
            assert.equal(bad.statusCode, 400, bad.body);
          }
        }
      } while (cursor);
      assert.deepEqual(seen, [...made].reverse());
      const events = await t.app.inject({
        method: 'GET',
        url: '/api/v1/events?type=listing.check_failed&limit=100',
        headers: a.headers,
      });
      assert.equal(events.statusCode, 200, events.body);
      const eventIds = events.json<{ data: { data: { id: string } }[] }>().data.map((e) => e.data.id);
      assert.deepEqual(new Set(eventIds), new Set(made));
    },
  );
});
