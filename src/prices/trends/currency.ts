/**
 * Converting a price into a product's currency, the one way every comparison does it
 * (docs/PRICES.md "Currencies", docs/prices/TRENDS.md): only through a rate the account set,
 * the direct pair `1 from = rate to` first, else the inverse of the opposite pair; no
 * triangulation. The result is rounded to 4 decimal places (half away from zero).
 */

/**
 * A lateral join that finds the rate for `from -> to` of account `account` as `<alias>.rate`
 * and `<alias>.inverse` (true: divide by it). Two probes of the exchange_rates primary key.
 * All arguments are SQL expressions.
 */
export function rateJoin(alias: string, account: string, from: string, to: string): string {
  return `left join lateral (
            select x.rate, x.base <> ${from} as inverse
              from exchange_rates x
             where x.account_id = ${account}
               and ((x.base = ${from} and x.quote = ${to}) or (x.base = ${to} and x.quote = ${from}))
             order by x.base = ${from} desc
             limit 1
          ) ${alias} on ${from} <> ${to}`;
}

/**
 * `price` (in currency `from`) in currency `to`, using the rate found by `rateJoin(alias, ...)`;
 * NULL when the currencies differ and no rate allows it. All arguments are SQL expressions.
 */
export function converted(price: string, alias: string, from: string, to: string): string {
  return `case when ${from} = ${to} then ${price}
               when ${alias}.inverse then round(${price} / ${alias}.rate, 4)
               else round(${price} * ${alias}.rate, 4) end`;
}
