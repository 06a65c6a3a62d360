import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertedSql, ExchangeRates, loadExchangeRates, rateJoin } from '../../src/money/convert.js';
import { divideRounded, multiplyRounded, numberToDecimal } from '../../src/money/decimal.js';
import { useTestApp } from '../helpers/app.js';

describe('money: exact conversion, in SQL and in JavaScript', () => {
  const t = useTestApp();

  it('multiplies and divides exactly, rounding once to 4 places half away from zero', () => {
    assert.equal(multiplyRounded('19.99', '1.09'), '21.7891');
    assert.equal(multiplyRounded('0.1', '3'), '0.3000'); // 0.1 * 3 is 0.30000000000000004 in floating point
    assert.equal(multiplyRounded('1.0001', '0.5'), '0.5001'); // 0.50005 -> up
    assert.equal(multiplyRounded('-1.0001', '0.5'), '-0.5001'); // away from zero
    assert.equal(multiplyRounded('1.0001', '0.49999999'), '0.5000'); // 0.500049989... -> down
    assert.equal(multiplyRounded('99999999999.9999', '1000000000'), '99999999999999900000.0000');
    assert.equal(multiplyRounded('12', '0.000000000001'), '0.0000');
    assert.equal(divideRounded('10', '3'), '3.3333');
    assert.equal(divideRounded('20', '3'), '6.6667');
    assert.equal(divideRounded('1', '0.000000000001'), '1000000000000.0000');
    assert.equal(divideRounded('0.0001', '2'), '0.0001'); // 0.00005 -> up
    assert.equal(divideRounded('0', '7'), '0.0000');
    assert.throws(() => divideRounded('1', '0'), RangeError);
    assert.throws(() => multiplyRounded('1e5', '1'), RangeError);
    assert.equal(numberToDecimal(1e-7), '0.0000001');
    assert.equal(numberToDecimal(1e21), '1000000000000000000000');
    assert.equal(numberToDecimal(19.99), '19.99');
    assert.equal(numberToDecimal(-0), '0');
    assert.equal(numberToDecimal(-2.5), '-2.5');
  });

  it('uses the direct rate, else the inverse of the opposite pair, else null', () => {
    const rates = new ExchangeRates([
      { base: 'EUR', quote: 'USD', rate: '1.090000000000' },
      { base: 'USD', quote: 'EUR', rate: '0.900000000000' },
      { base: 'GBP', quote: 'EUR', rate: '1.170000000000' },
    ]);
    assert.equal(rates.convert('100', 'EUR', 'USD'), '109.0000');
    assert.equal(rates.convert(100, 'USD', 'EUR'), '90.0000', 'the direct rate wins over the inverse of the other');
    assert.equal(rates.convert(11.7, 'EUR', 'GBP'), '10.0000');
    assert.equal(rates.convert(10, 'EUR', 'GBP'), '8.5470');
    assert.deepEqual(rates.rateFor('EUR', 'GBP'), { rate: '1.170000000000', inverse: true });
    assert.equal(rates.convert(10, 'EUR', 'JPY'), null);
    assert.equal(rates.convert(10, 'GBP', 'USD'), null, 'never chained through a third currency');
    assert.equal(rates.convert(19.99, 'JPY', 'JPY'), '19.9900');
  });

  it("loads an account's rates, and the SQL form converts to the same digits on this database, rounding included", async () => {
    const { headers, accountId } = await t.newKey();
    const other = await t.newKey();
    for (const [pair, rate] of [
      ['EUR/USD', 1.0825],
      ['USD/JPY', 151.234567891234],
      ['GBP/EUR', 1.17],
      ['CHF/EUR', 0.000000000001],
    ] as const) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/exchange-rates/${pair}`,
        headers,
        payload: { rate },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    await t.app.inject({
      method: 'PUT',
      url: '/api/v1/exchange-rates/EUR/USD',
      headers: other.headers,
      payload: { rate: 5 },
    });
    const rates = await loadExchangeRates(t.rt.db, accountId);
    assert.equal(rates.convert(100, 'EUR', 'USD'), '108.2500');
    assert.equal((await loadExchangeRates(t.rt.db, other.accountId)).convert(100, 'EUR', 'USD'), '500.0000');

    const amounts = ['0', '0.0001', '0.0005', '1', '19.99', '33.3333', '1234.5678', '99999999999.9999'];
    const pairs = [
      ['EUR', 'USD'],
      ['USD', 'EUR'],
      ['USD', 'JPY'],
      ['JPY', 'USD'],
      ['EUR', 'GBP'],
      ['EUR', 'CHF'],
      ['CHF', 'EUR'],
      ['EUR', 'EUR'],
      ['EUR', 'JPY'],
    ];
    const cases = amounts.flatMap((a) => pairs.map(([from, to]) => ({ a, from: from!, to: to! })));
    const r = await t.rt.db.query<{ converted: string | null }>(
      `select ${convertedSql('u.amount', 'fx', 'u.from_currency', 'u.to_currency')}::text as converted
         from unnest($2::numeric[], $3::text[], $4::text[]) with ordinality as u (amount, from_currency, to_currency, n)
         ${rateJoin('fx', '$1', 'u.from_currency', 'u.to_currency')}
        order by u.n`,
      [accountId, cases.map((c) => c.a), cases.map((c) => c.from), cases.map((c) => c.to)],
    );
    cases.forEach((c, i) => {
      assert.equal(r.rows[i]!.converted, rates.convert(c.a, c.from, c.to), `${c.a} ${c.from} -> ${c.to}`);
    });
  });
});
