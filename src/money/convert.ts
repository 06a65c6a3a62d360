import type { Queryable } from '../db/types.js';
import { divideRounded, multiplyRounded, numberToDecimal } from './decimal.js';

/**
 * Converting an amount into another currency, the one way every comparison does it
 * (docs/PRICES.md "Currencies"): only through a rate the account set (exchange_rates: 1 base =
 * rate quote), the pair's own rate first, else dividing by the opposite pair's rate; never
 * through a third currency, never an invented rate. The result is exact, rounded once to 4
 * decimal places half away from zero; with no rate it is null and the amount is not compared.
 *
 * The same rule twice, and only twice: as SQL (`rateJoin` + `convertedSql`) for queries that
 * compare in the database, and as JavaScript (`ExchangeRates`) for code that compares rows it
 * already holds. test/money/convert.test.ts checks they give the same digits.
 */

/**
 * A lateral join that finds the rate for `from -> to` of account `account` as `<alias>.rate`
 * and `<alias>.inverse` (true: divide by it). Two probes of the exchange_rates primary key, made
 * only when the currencies differ (a one-time filter: rows in one currency probe nothing).
 * All arguments are SQL expressions.
 */
export function rateJoin(alias: string, account: string, from: string, to: string): string {
  return `left join lateral (
            select x.rate, x.base <> ${from} as inverse
              from exchange_rates x
             where ${from} <> ${to} and x.account_id = ${account}
               and ((x.base = ${from} and x.quote = ${to}) or (x.base = ${to} and x.quote = ${from}))
             order by x.base = ${from} desc
             limit 1
          ) ${alias} on ${from} <> ${to}`;
}

/**
 * `amount` (in currency `from`) in currency `to`, numeric with 4 decimal places, using the rate
 * found by `rateJoin(alias, ...)`; NULL when the currencies differ and no rate allows it. All
 * arguments are SQL expressions.
 */
export function convertedSql(amount: string, alias: string, from: string, to: string): string {
  return `case when ${from} = ${to} then round(${amount}, 4)
               when ${alias}.inverse then round(${amount} / ${alias}.rate, 4)
               else round(${amount} * ${alias}.rate, 4) end`;
}

export interface RateRow {
  base: string;
  quote: string;
  /** Exact decimal text, as the numeric column reads. */
  rate: string;
}

/** An account's rates in memory: `loadExchangeRates(db, accountId).convert('19.99', 'EUR', 'USD')`. */
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
   * converts to itself, rounded to 4 places like the rest.
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
  const r = await db.query<RateRow>(
    `/* loadExchangeRates */ select base, quote, rate::text as rate from exchange_rates where account_id = $1`,
    [accountId],
  );
  return new ExchangeRates(r.rows);
}
