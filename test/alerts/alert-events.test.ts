import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf } from '../products/support.js';
import { catalogue, createAlert, type Headers, post, rule } from './rules-support.js';
import type { TestApp } from '../helpers/app.js';
import type { AlertEvent, Page } from '../helpers/api-types.js';

type AlertPage = Page<AlertEvent>;

const fire = (t: TestApp, headers: Headers, alertId: string) =>
  post<AlertEvent>(t, headers, `/alerts/${alertId}/test`, undefined);

async function list(t: TestApp, headers: Headers, query = ''): Promise<AlertPage> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/alert-events${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<AlertPage>();
}

describe('alert events: the feed and acknowledgement', () => {
  const t = useTestApp();

  it('lists events newest first, filtered by rule, product, competitor, state and time', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await catalogue(t, headers);
    const byProduct = await createAlert(t, headers, rule({ name: 'p', product_id: product.id }));
    const byCompetitor = await createAlert(t, headers, rule({ name: 'c', competitor_id: competitor.id }));
    const e1 = await fire(t, headers, byProduct.id);
    const e2 = await fire(t, headers, byCompetitor.id);
    const e3 = await fire(t, headers, byProduct.id);
    const names = (p: AlertPage) => p.data.map((e) => e.id);
    assert.deepEqual(names(await list(t, headers)), [e3.id, e2.id, e1.id]);
    assert.deepEqual(names(await list(t, headers, '?sort=created_at')), [e1.id, e2.id, e3.id]);
    assert.deepEqual(names(await list(t, headers, `?alert_id=${byProduct.id}`)), [e3.id, e1.id]);
    assert.deepEqual(names(await list(t, headers, `?product_id=${product.id}`)), [e3.id, e1.id]);
    assert.deepEqual(names(await list(t, headers, `?competitor_id=${competitor.id}`)), [e2.id]);
    assert.deepEqual(names(await list(t, headers, '?state=open')), [e3.id, e2.id, e1.id]);
    assert.deepEqual(names(await list(t, headers, '?state=acknowledged')), []);
    await post(t, headers, `/alert-events/${e2.id}/acknowledge`, undefined, 200);
    assert.deepEqual(names(await list(t, headers, '?state=open')), [e3.id, e1.id]);
    assert.deepEqual(names(await list(t, headers, '?state=acknowledged')), [e2.id]);
    assert.deepEqual(
      names(await list(t, headers, `?created_after=${encodeURIComponent(e2.created_at)}&sort=created_at`)).slice(0, 1),
      [e2.id],
    );
    assert.deepEqual(names(await list(t, headers, `?created_before=${encodeURIComponent(e1.created_at)}`)), []);
    assert.deepEqual(
      names(await list(t, headers, '?created_after=2000-01-01T00:00:00Z&created_before=2000-01-02T00:00:00Z')),
      [],
    );
    assert.deepEqual(names(await list(t, headers, '?alert_id=alrt_nothere')), []);
  });

  it('pages with the list toolkit', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const fired: string[] = [];
    for (let i = 0; i < 5; i++) fired.push((await fire(t, headers, a.id)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: AlertPage = await list(t, headers, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((e) => e.id));
      cursor = page.pagination.next_cursor;
      assert.equal(page.pagination.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, [...fired].reverse());
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/alert-events?cursor=nope', headers }),
      400,
      'invalid_request',
    );
  });

  it('refuses bad filters with a 422 naming them', async () => {
    const { headers } = await t.newKey();
    for (const [query, field] of [
      ['state=closed', 'state'],
      ['alert_id=prod_x', 'alert_id'],
      ['product_id=x', 'product_id'],
      ['competitor_id=comp_%27', 'competitor_id'],
      ['created_after=yesterday', 'created_after'],
      ['created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
      ['limit=1000', 'limit'],
      ['acknowledged=true', 'acknowledged'],
    ] as const) {
      const body = expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/alert-events?${query}`, headers }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), [field], query);
    }
  });

  it('gets one event; acknowledging it answers it and keeps the first acknowledged_at', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const e = await fire(t, headers, a.id);
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/alert-events/${e.id}`, headers });
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), e);
    assert.equal(e.acknowledged_at, null);
    const first = await post<AlertEvent>(t, headers, `/alert-events/${e.id}/acknowledge`, undefined, 200);
    assert.deepEqual({ ...first, acknowledged_at: null }, e);
    assert.match(first.acknowledged_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const stored = (
      await t.app.inject({ method: 'GET', url: `/api/v1/alert-events/${e.id}`, headers })
    ).json<AlertEvent>();
    assert.equal(stored.acknowledged_at, first.acknowledged_at, 'the answer says what was stored, to the millisecond');
    // Moved into the past, so a second write would show.
    await t.rt.db.query(`update alert_events set acknowledged_at = '2026-01-01T00:00:00Z' where id = $1`, [e.id]);
    const second = await post<AlertEvent>(t, headers, `/alert-events/${e.id}/acknowledge`, {}, 200);
    assert.equal(second.acknowledged_at, '2026-01-01T00:00:00.000Z');
    const again = (await t.app.inject({ method: 'GET', url: `/v1/alert-events/${e.id}`, headers })).json<AlertEvent>();
    assert.equal(again.acknowledged_at, '2026-01-01T00:00:00.000Z');
  });

  it('acknowledges many at once; ids not in the account are reported, not acknowledged, and never block the rest', async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const a = await createAlert(t, mine.headers);
    const b = await createAlert(t, theirs.headers);
    const e1 = await fire(t, mine.headers, a.id);
    const e2 = await fire(t, mine.headers, a.id);
    const e3 = await fire(t, mine.headers, a.id);
    const foreign = await fire(t, theirs.headers, b.id);
    const early = await post<AlertEvent>(t, mine.headers, `/alert-events/${e1.id}/acknowledge`, undefined, 200);
    const res = await post<{ data: AlertEvent[]; count: number; not_found: string[] }>(
      t,
      mine.headers,
      '/alert-events/acknowledge',
      { ids: [e1.id, e2.id, foreign.id, 'alev_00000000000000000000000000', e2.id] },
      200,
    );
    assert.equal(res.count, 2);
    assert.deepEqual(
      res.data.map((e) => e.id),
      [e1.id, e2.id],
    );
    assert.ok(res.data.every((e) => e.acknowledged_at !== null));
    assert.equal(res.data[0]!.acknowledged_at, early.acknowledged_at, 'acknowledged before: keeps its time');
    assert.deepEqual(res.not_found, [foreign.id, 'alev_00000000000000000000000000']);
    assert.deepEqual(
      (await list(t, mine.headers, '?state=open')).data.map((e) => e.id),
      [e3.id],
    );
    assert.equal(
      (await list(t, theirs.headers, '?state=open')).data.length,
      1,
      "the other account's event is untouched",
    );
  });

  it('refuses a bad acknowledge body', async () => {
    const { headers } = await t.newKey();
    const cases: [unknown, string][] = [
      [{}, 'ids'],
      [{ ids: [] }, 'ids'],
      [{ ids: 'alev_x' }, 'ids'],
      [{ ids: ['alrt_x'] }, 'ids[0]'],
      [{ ids: [1] }, 'ids[0]'],
      [{ ids: Array.from({ length: 1001 }, (_, i) => `alev_${i}`) }, 'ids'],
      [{ ids: ['alev_x'], all: true }, 'all'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/alert-events/acknowledge',
        headers,
        payload: payload as object,
      });
      assert.deepEqual(
        fieldsOf(expectError(res, 422, 'validation_failed')),
        [field],
        JSON.stringify(payload).slice(0, 100),
      );
    }
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/alert-events/acknowledge', headers, payload: '{"ids": [' }),
      400,
      'invalid_json',
    );
    const thousand = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alert-events/acknowledge',
      headers,
      payload: { ids: Array.from({ length: 1000 }, (_, i) => `alev_${i}`) },
    });
    assert.equal(thousand.statusCode, 200, thousand.body);
    assert.equal(thousand.json<{ count: number; not_found: string[] }>().not_found.length, 1000);
  });

  it("another account's alert events are 404 everywhere and never listed", async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const b = await createAlert(t, theirs.headers);
    const foreign = await fire(t, theirs.headers, b.id);
    for (const prefix of ['/api/v1', '/v1']) {
      expectError(
        await t.app.inject({ method: 'GET', url: `${prefix}/alert-events/${foreign.id}`, headers: mine.headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({
          method: 'POST',
          url: `${prefix}/alert-events/${foreign.id}/acknowledge`,
          headers: mine.headers,
        }),
        404,
        'not_found',
      );
    }
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/alert-events/alev_nothere', headers: mine.headers }),
      404,
      'not_found',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/alert-events/%3Cscript%3E', headers: mine.headers }),
      404,
      'not_found',
    );
    assert.equal((await list(t, mine.headers)).data.length, 0);
    assert.equal((await list(t, mine.headers, `?alert_id=${b.id}`)).data.length, 0);
    const still = (
      await t.app.inject({ method: 'GET', url: `/api/v1/alert-events/${foreign.id}`, headers: theirs.headers })
    ).json<AlertEvent>();
    assert.equal(still.acknowledged_at, null);
  });

  it('go with their rule when it is deleted', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const e = await fire(t, headers, a.id);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/alerts/${a.id}`, headers });
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/alert-events/${e.id}`, headers }), 404, 'not_found');
  });
});
