import type { Queryable } from '../db/types.js';
import { divideRounded, multiplyRounded, numberToDecimal } from './decimal.js';

/**
 * Converting amounts with an account's exchange rates, for code outside this area:
 *
 *   const rates = await loadExchangeRates(db, accountId);
 *   rates.convert('19.99', 'EUR', 'USD'); // "21.7891" with 1 EUR = 1.09 USD; null without a rate
 *
 * A rate row says 1 base = rate quote. base -> quote multiplies by the rate; quote -> base,
 * when that pair has no rate of its own, divides by it (never by a rounded 1/rate). The result
 * is exact, rounded once to 4 decimal places half away from zero: the same as PostgreSQL's
 * round(amount * rate, 4) / round(amount / rate, 4), which convertedAmountSql() below writes.
 */
export interface RateRow {
  base: string;
  quote: string;
  /** Exact decimal text, as the numeric column reads. */
  rate: string;
}

export class ExchangeRates {
  private readonly direct = new Map<string, string>();

  constructor(rows: readonly RateRow[]) {
    for (const r of rows) this.direct.set(`${r.base}/${r.quote}`, r.rate);
  }

  /** How to go from `from` to `to`: the pair's own rate, or the inverse of the opposite pair's; null without either. */
  rateFor(from: string, to: string): { rate: string; inverse: boolean } | null {
    const direct = this.direct.get(`${from}/${to}`);
    if (direct !== undefined) return { rate: direct, inverse: false };
    const opposite = this.direct.get(`${to}/${from}`);
    return opposite === undefined ? null : { rate: opposite, inverse: true };
  }

  /**
   * `amount` (decimal text or a JSON number) in `from`, expressed in `to`: decimal text with 4
   * decimal places, or null when the account has no rate between the two. The same currency
   * converts to itself (4 places, unrounded input of up to 4 places comes back unchanged).
   */
  convert(amount: string | number, from: string, to: string): string | null {
    const text = typeof amount === 'number' ? numberToDecimal(amount) : amount;
    if (from === to) return multiplyRounded(text, '1');
    const r = this.rateFor(from, to);
    if (!r) return null;
    return r.inverse ? divideRounded(text, r.rate) : multiplyRounded(text, r.rate);
  }
}

/** Every rate the account set, in one query (an account has at most a few hundred). */
export async function loadExchangeRates(db: Queryable, accountId: string): Promise<ExchangeRates> {
  const r = await db.query<RateRow>(`/* loadExchangeRates */ select base, quote, rate::text as rate from exchange_rates where account_id = $1`, [
    accountId,
  ]);
  return new ExchangeRates(r.rows);
}

/**
 * The same conversion as an SQL expression, for queries that convert in the database. Each
 * argument is an SQL expression (a column or a $n parameter); the result is numeric with 4
 * decimal places, or NULL when the account has no rate between the two currencies.
 */
export function convertedAmountSql(amount: string, from: string, to: string, accountId: string): string {
  return `(case when ${from} = ${to} then round(${amount}, 4) else coalesce(
    (select round(${amount} * x.rate, 4) from exchange_rates x where x.account_id = ${accountId} and x.base = ${from} and x.quote = ${to}),
    (select round(${amount} / x.rate, 4) from exchange_rates x where x.account_id = ${accountId} and x.base = ${to} and x.quote = ${from})
  ) end)`;
}
