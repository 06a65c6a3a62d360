import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CheckResult } from '../../src/checks/schemas.js';
import { createCompetitor, useMonitoringTest } from '../jobs/support.js';

/**
 * Issue 13, "Structured vs visible": a shop whose meta price lags the page (67.84 in the markup,
 * 71.91 shown) records the shown price; when the markup catches up (71.91 both), the next check
 * records the same price and the series reports no change for it.
 */

const t = useMonitoringTest();
const T = { timeout: 30_000 };
const lagging = fs.readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/pages/v-meta-lags-visible.html'),
  'utf8',
);
const caughtUp = lagging.replace('content="67.84"', 'content="71.91"');

describe('a structured price that catches up with the page', () => {
  let body = lagging;
  let server: http.Server;
  let url: string;
  before(async () => {
    assert.notEqual(caughtUp, lagging, 'the fixture still holds the lagging meta price');
    server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hose-reel`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('records the shown price both times and reports one price, not a change', T, async () => {
    const competitorId = await createCompetitor(t, 'Lagging markup shop');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers: t.account.headers,
      payload: { product_id: t.account.productId, competitor_id: competitorId, url },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json<{ id: string }>().id;
    const check = async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/listings/${id}/check`,
        headers: t.account.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<CheckResult>();
    };

    const first = await check();
    assert.equal(first.ok, true, first.error ?? '');
    assert.equal(first.price, 71.91);
    assert.equal(first.currency, 'GBP');
    assert.match(
      JSON.stringify(first.candidates),
      /the page shows 71\.91 as the current price/,
      'the disagreement is recorded with the check',
    );

    body = caughtUp;
    const second = await check();
    assert.equal(second.ok, true, second.error ?? '');
    assert.equal(second.price, 71.91);
    assert.doesNotMatch(
      JSON.stringify(second.candidates),
      /the page shows 71\.91 as the current price/,
      'nothing disagrees any more',
    );

    const changesOf = async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/price-changes?product_id=${t.account.productId}&competitor_id=${competitorId}`,
        headers: t.account.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ data: unknown[] }>().data;
    };
    assert.deepEqual(await changesOf(), [], 'the markup catching up is no change');

    // A real change of this series is reported: the empty list above could have held one.
    body = caughtUp.replace('content="71.91"', 'content="69.99"').replace('£71.91', '£69.99');
    assert.equal((await check()).price, 69.99);
    assert.equal((await changesOf()).length, 1, 'one change, 71.91 -> 69.99');
  });
});
