import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { type Headers, expectError, PREFIXES } from '../products/support.js';
import { at, catalogue, ingest, ingestOk } from '../prices/ingest-support.js';
import type { AnyEvent, Page } from '../helpers/api-types.js';

/** The outbox: every change commits with its event, and only then (docs/EVENTS.md). */

type EventPage = Page<AnyEvent>;

const t = useTestApp();

async function events(headers: Headers, query = '', prefix = '/api/v1'): Promise<AnyEvent[]> {
  const res = await t.app.inject({ method: 'GET', url: `${prefix}/events?limit=100${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<EventPage>().data;
}

const send = (headers: Headers, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

describe('events: the outbox', () => {
  for (const prefix of PREFIXES) {
    it(`products, competitors and listings tell each change once, with the resource as the API returns it, under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const p = await send(headers, 'POST', '/products', {
        name: 'Kettle',
        base_price: 40,
        currency: 'EUR',
        sku: 'K-1',
      });
      assert.equal(p.statusCode, 201, p.body);
      const product = p.json<{ id: string }>();
      const c = await send(headers, 'POST', '/competitors', { name: 'Rival', website: 'https://rival.example' });
      const competitor = c.json<{ id: string }>();
      const l = await send(headers, 'POST', '/listings', {
        product_id: product.id,
        competitor_id: competitor.id,
        url: 'https://rival.example/k',
      });
      const listing = l.json<{ id: string }>();
      const u = await send(headers, 'PATCH', `/products/${product.id}`, { name: 'Kettle 2' });
      assert.equal(u.statusCode, 200);
      // A PUT that sends nothing changes nothing: no event.
      assert.equal((await send(headers, 'PUT', `/competitors/${competitor.id}`, {})).statusCode, 200);
      assert.equal((await send(headers, 'PATCH', `/competitors/${competitor.id}`, { notes: 'cheap' })).statusCode, 200);
      assert.equal((await send(headers, 'PATCH', `/listings/${listing.id}`, { enabled: false })).statusCode, 200);
      assert.equal((await send(headers, 'DELETE', `/listings/${listing.id}`)).statusCode, 204);
      assert.equal((await send(headers, 'DELETE', `/competitors/${competitor.id}`)).statusCode, 204);
      assert.equal((await send(headers, 'DELETE', `/products/${product.id}`)).statusCode, 204);

      const list = await events(headers, '&sort=created_at', prefix);
      assert.deepEqual(
        list.map((e) => [e.type, e.data.id]),
        [
          ['product.created', product.id],
          ['competitor.created', competitor.id],
          ['listing.created', listing.id],
          ['product.updated', product.id],
          ['competitor.updated', competitor.id],
          ['listing.updated', listing.id],
          ['listing.deleted', listing.id],
          ['competitor.deleted', competitor.id],
          ['product.deleted', product.id],
        ],
      );
      for (const e of list) {
        assert.match(e.id, /^evt_[0-9a-z]{26}$/);
        assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.deepEqual(Object.keys(e).sort(), ['created_at', 'data', 'id', 'type']);
      }
      // The data is the resource as the API answered the change.
      assert.deepEqual(list[0]!.data, p.json());
      assert.deepEqual(list[1]!.data, c.json());
      assert.deepEqual(list[2]!.data, l.json());
      assert.deepEqual(list[3]!.data, u.json());
      assert.equal((list[8]!.data as { name: string }).name, 'Kettle 2');
      // One event read alone is the same object.
      const one = await t.app.inject({ method: 'GET', url: `${prefix}/events/${list[3]!.id}`, headers });
      assert.equal(one.statusCode, 200);
      assert.deepEqual(one.json(), list[3]);
    });
  }

  it('a change that fails records no event; a batch records one per product created', async () => {
    const { headers } = await t.newKey();
    assert.equal(
      (await send(headers, 'POST', '/products', { name: 'A', base_price: 1, currency: 'EUR', sku: 'DUP' })).statusCode,
      201,
    );
    expectError(
      await send(headers, 'POST', '/products', { name: 'B', base_price: 1, currency: 'EUR', sku: 'DUP' }),
      409,
      'conflict',
    );
    expectError(await send(headers, 'PATCH', '/products/prod_doesnotexist', { name: 'x' }), 404, 'not_found');
    const batch = await send(headers, 'POST', '/products/batch', {
      products: [
        { name: 'C', base_price: 1, currency: 'EUR', sku: 'C' },
        { name: 'D', base_price: 1, currency: 'EUR', sku: 'DUP' },
        { name: 'E', base_price: 1, currency: 'EUR' },
      ],
    });
    assert.equal(batch.statusCode, 200, batch.body);
    // Atomic and failing: nothing, events included.
    const atomic = await send(headers, 'POST', '/products/batch', {
      atomic: true,
      products: [
        { name: 'F', base_price: 1, currency: 'EUR', sku: 'F' },
        { name: 'G', base_price: 1, currency: 'EUR', sku: 'DUP' },
      ],
    });
    assert.equal(atomic.statusCode, 409, atomic.body);
    const list = await events(headers, '&sort=created_at');
    assert.deepEqual(
      list.map((e) => [e.type, (e.data as { name: string }).name]),
      [
        ['product.created', 'A'],
        ['product.created', 'C'],
        ['product.created', 'E'],
      ],
    );
  });

  it('price.changed and stock.changed carry the change with its sequence in the series; late and same prices tell nothing', async () => {
    const c = await catalogue(t);
    const o = (hours: number, price: number, extra: object = {}) => ({
      product_id: c.productId,
      competitor_id: c.competitorId,
      price,
      currency: 'EUR',
      in_stock: true,
      observed_at: at(hours),
      ...extra,
    });
    await ingestOk(t, c.headers, [o(0, 10), o(1, 11), o(2, 11), o(3, 11, { in_stock: false })]);
    await ingestOk(t, c.headers, [o(4, 9, { in_stock: true }), o(0.5, 1)]); // the second is late: history only
    // Our own series numbers its changes on its own.
    await ingestOk(t, c.headers, [{ product_id: c.productId, price: 50, currency: 'EUR', observed_at: at(0) }]);
    await ingestOk(t, c.headers, [{ product_id: c.productId, price: 49, currency: 'EUR', observed_at: at(1) }]);

    const list = await events(c.headers, '&type=price.changed,stock.changed&sort=created_at');
    const rival = list.filter((e) => e.data.competitor_id === c.competitorId);
    assert.deepEqual(
      rival.map((e) => [e.type, e.data.sequence, (e.data.new as { price: number }).price]),
      [
        ['price.changed', 1, 11],
        ['stock.changed', 2, 11],
        // price and stock at once: both events, one sequence
        ['price.changed', 3, 9],
        ['stock.changed', 3, 9],
      ],
    );
    const own = list.filter((e) => e.data.competitor_id === null);
    assert.deepEqual(
      own.map((e) => [e.type, e.data.sequence]),
      [['price.changed', 1]],
    );
    // The data is the change as GET /price-changes shows it.
    const changes = await t.app.inject({ method: 'GET', url: '/api/v1/price-changes?limit=100', headers: c.headers });
    const byId = new Map(changes.json<{ data: { id: string }[] }>().data.map((ch) => [ch.id, ch]));
    for (const e of list) assert.deepEqual(e.data, byId.get(e.data.id!));
  });

  it('an ingestion that fails as a whole records no events', async () => {
    const c = await catalogue(t);
    await ingestOk(t, c.headers, [
      { product_id: c.productId, competitor_id: c.competitorId, price: 10, currency: 'EUR', observed_at: at(0) },
    ]);
    const res = await ingest(t, c.headers, {
      atomic: true,
      observations: [
        { product_id: c.productId, competitor_id: c.competitorId, price: 12, currency: 'EUR', observed_at: at(1) },
        { product_id: 'prod_notmine', price: 12, currency: 'EUR' },
      ],
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(await events(c.headers, '&type=price.changed'), []);
  });

  it('filters by type and time, pages with a cursor, and keeps accounts apart', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await send(a.headers, 'POST', '/products', { name: `P${i}`, base_price: 1, currency: 'EUR' })).statusCode,
        201,
      );
    assert.equal(
      (await send(a.headers, 'POST', '/competitors', { name: 'R', website: 'https://r.example' })).statusCode,
      201,
    );
    assert.equal(
      (await send(b.headers, 'POST', '/products', { name: 'Other', base_price: 1, currency: 'EUR' })).statusCode,
      201,
    );

    const all = await events(a.headers);
    assert.equal(all.length, 6);
    assert.deepEqual(
      (await events(a.headers, '&type=competitor.created')).map((e) => e.type),
      ['competitor.created'],
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/events?limit=4${cursor ? `&cursor=${cursor}` : ''}`;
      const page: EventPage = (await t.app.inject({ method: 'GET', url, headers: a.headers })).json<EventPage>();
      seen.push(...page.data.map((e) => e.id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.map((e) => e.id),
    );
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.deepEqual(await events(a.headers, `&created_after=${encodeURIComponent(future)}`), []);
    assert.equal((await events(a.headers, `&created_before=${encodeURIComponent(future)}`)).length, 6);

    // Another account's event is a 404, as is an unknown one.
    const theirs = (await events(b.headers))[0]!;
    expectError(
      await t.app.inject({ method: 'GET', url: `/api/v1/events/${theirs.id}`, headers: a.headers }),
      404,
      'not_found',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/events/evt_unknown', headers: a.headers }),
      404,
      'not_found',
    );
    assert.equal((await events(b.headers)).length, 1);
  });

  it('refuses bad parameters with 422 naming them, a forged cursor with 400, never a 500', async () => {
    const { headers } = await t.newKey();
    const bad: [string, string][] = [
      ['type=product.exploded', 'type'],
      ['type=product.created,', 'type'],
      ["type=' or 1=1 --", 'type'],
      ['created_after=yesterday', 'created_after'],
      ['created_after=2025-01-02T00:00:00Z&created_before=2025-01-01T00:00:00Z', 'created_after'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['sort=type', 'sort'],
      ['colour=red', 'colour'],
    ];
    for (const [query, field] of bad) {
      const body = expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/events?${query}`, headers }),
        422,
        'validation_failed',
      );
      assert.ok(JSON.stringify(body.details ?? []).includes(field), `${query}: ${JSON.stringify(body)}`);
    }
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/events?cursor=not-a-cursor', headers }),
      400,
      'invalid_request',
    );
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/events/%3Cscript%3E', headers }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/events' }), 401, 'unauthorized');
  });
});
