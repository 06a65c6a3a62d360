import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf, type Headers } from '../products/support.js';
import type { ExchangeRate } from '../helpers/api-types.js';

describe('/exchange-rates', () => {
  const t = useTestApp();

  const put = (headers: Headers, pair: string, payload: unknown, prefix = '/api/v1') =>
    t.app.inject({ method: 'PUT', url: `${prefix}/exchange-rates/${pair}`, headers, payload: payload as object });
  const get = (headers: Headers, path: string) =>
    t.app.inject({ method: 'GET', url: `/api/v1/exchange-rates${path}`, headers });

  it('PUT creates (201 with Location) then replaces (200); GET reads it; DELETE removes it', async () => {
    const { headers } = await t.newKey();
    const created = await put(headers, 'eur/usd', { rate: 1.0825 });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/api/v1/exchange-rates/EUR/USD');
    const rate = created.json<ExchangeRate>();
    assert.deepEqual([rate.object, rate.base, rate.quote, rate.rate], ['exchange_rate', 'EUR', 'USD', 1.0825]);
    assert.equal(rate.created_at, rate.updated_at);

    const same = await put(headers, 'EUR/usd', { rate: 1.0825 });
    assert.equal(same.statusCode, 200);
    assert.equal(same.headers.location, undefined);
    assert.equal(same.json<ExchangeRate>().updated_at, rate.updated_at, 'the same rate again changes nothing');
    const replaced = await put(headers, 'EUR/USD', { rate: 1.1 }, '/v1');
    assert.equal(replaced.statusCode, 200);
    const r2 = replaced.json<ExchangeRate>();
    assert.equal(r2.rate, 1.1);
    assert.equal(r2.created_at, rate.created_at);
    assert.ok(r2.updated_at > rate.updated_at);

    const got = await get(headers, '/eur/usd');
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), r2);
    // The opposite pair is not a rate of its own.
    expectError(await get(headers, '/USD/EUR'), 404, 'not_found');

    const del = await t.app.inject({ method: 'DELETE', url: '/api/v1/exchange-rates/Eur/Usd', headers });
    assert.equal(del.statusCode, 204);
    expectError(await get(headers, '/EUR/USD'), 404, 'not_found');
    expectError(
      await t.app.inject({ method: 'DELETE', url: '/api/v1/exchange-rates/EUR/USD', headers }),
      404,
      'not_found',
    );
  });

  it('keeps rates exactly as sent: 12 decimal places, 15 significant digits', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [pair, value, text] of [
      ['USD/JPY', 151.234567891234, '151.234567891234'],
      ['JPY/USD', 0.000000000001, '0.000000000001'],
      ['USD/VND', 1_000_000_000, '1000000000'],
      ['GBP/EUR', 1.17, '1.17'],
      ['CHF/EUR', 0.1, '0.1'],
    ] as const) {
      const res = await put(headers, pair, { rate: value });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json<ExchangeRate>().rate, value);
      const db = await t.rt.db.query<{ rate: string }>(
        `select rtrim(rtrim(rate::text, '0'), '.') as rate from exchange_rates where account_id = $1 and base || '/' || quote = $2`,
        [accountId, pair],
      );
      assert.equal(db.rows[0]!.rate, text);
    }
  });

  it('refuses bad pairs and rates with a 422 naming the field', async () => {
    const { headers } = await t.newKey();
    for (const [pair, field] of [
      ['EUR/EUR', 'quote'],
      ['eur/EUR', 'quote'],
      ['XYZ/USD', 'base'],
      ['EUR/EURO', 'quote'],
      ['E/USD', 'base'],
      ['123/USD', 'base'],
      [`${encodeURIComponent("EUR' or 1=1--")}/USD`, 'base'],
      [`${encodeURIComponent('<b>')}/USD`, 'base'],
      [`${encodeURIComponent('€€€')}/USD`, 'base'],
    ] as const) {
      for (const method of ['PUT', 'GET', 'DELETE'] as const) {
        const res = await t.app.inject({
          method,
          url: `/api/v1/exchange-rates/${pair}`,
          headers,
          ...(method === 'PUT' ? { payload: { rate: 1 } } : {}),
        });
        const err = expectError(res, 422, 'validation_failed');
        assert.deepEqual(fieldsOf(err), [field], `${method} ${pair}`);
      }
    }
    for (const [payload, field] of [
      [{ rate: 0 }, 'rate'],
      [{ rate: -1 }, 'rate'],
      [{ rate: 1e308 }, 'rate'],
      [{ rate: 1_000_000_000.5 }, 'rate'],
      [{ rate: 1.0000000000001 }, 'rate'],
      [{ rate: 1e-13 }, 'rate'],
      [{ rate: 123456.1234567891 }, 'rate'], // 16 significant digits
      [{ rate: '1.08' }, 'rate'],
      [{ rate: null }, 'rate'],
      [{}, 'rate'],
      [{ rate: 1, base: 'EUR' }, 'base'],
      [[1], '(body)'],
    ] as const) {
      const err = expectError(await put(headers, 'EUR/USD', payload), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), [field], JSON.stringify(payload));
    }
    expectError(await put(headers, 'EUR/USD', '{"rate": 1.'), 400, 'invalid_json');
    expectError(
      await put(headers, 'EUR/USD', JSON.stringify({ rate: 1, pad: 'x'.repeat(2 * 1024 * 1024) })),
      413,
      'payload_too_large',
    );
    const list = await get(headers, '');
    assert.deepEqual(list.json<{ data: unknown[] }>().data, [], 'nothing was written');
  });

  it("lists the account's rates by base then quote, filtered and paged; other accounts see none", async () => {
    const { headers } = await t.newKey();
    const other = await t.newKey();
    const pairs = ['USD/EUR', 'EUR/USD', 'EUR/GBP', 'CHF/EUR', 'GBP/JPY', 'EUR/CHF', 'AUD/NZD'];
    for (const [i, pair] of pairs.entries())
      assert.equal((await put(headers, pair, { rate: 1 + i / 10 })).statusCode, 201);
    await put(other.headers, 'EUR/USD', { rate: 2 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(headers, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: ExchangeRate[]; pagination: { next_cursor: string | null } }>();
      seen.push(...page.data.map((r) => `${r.base}/${r.quote}`));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...pairs].sort());
    const eur = await get(headers, '?base=eur');
    assert.deepEqual(
      eur.json<{ data: ExchangeRate[] }>().data.map((r) => r.quote),
      ['CHF', 'GBP', 'USD'],
    );
    const intoEur = await get(headers, '?quote=EUR&base=CHF');
    assert.deepEqual(
      intoEur.json<{ data: ExchangeRate[] }>().data.map((r) => r.rate),
      [1.3],
    );
    // Another account's rate is its own: this account's is unchanged, and it cannot read or delete this one.
    assert.equal((await get(other.headers, '')).json<{ data: ExchangeRate[] }>().data.length, 1);
    assert.equal((await get(headers, '/EUR/USD')).json<ExchangeRate>().rate, 1.1);
    expectError(await get(other.headers, '/CHF/EUR'), 404, 'not_found');
    expectError(
      await t.app.inject({ method: 'DELETE', url: '/api/v1/exchange-rates/CHF/EUR', headers: other.headers }),
      404,
      'not_found',
    );
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['base=EURO', 'base'],
      ['quote=xx', 'quote'],
      ['rate=1', 'rate'],
    ] as const) {
      assert.deepEqual(
        fieldsOf(expectError(await get(headers, `?${query}`), 422, 'validation_failed')),
        [field],
        query,
      );
    }
    const forged = Buffer.from(JSON.stringify(['base,quote', "EUR/US' or 1=1", 'x'])).toString('base64url');
    expectError(await get(headers, `?cursor=${forged}`), 400, 'invalid_request');
  });
});
