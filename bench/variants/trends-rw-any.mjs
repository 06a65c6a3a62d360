// A variant of the trends statement for bench/prices-statement-cpu.ts (VARIANTS=this file,
// WHAT=trends): the edges' raw rows (`rw`) read with one lateral per edge day over all the
// series (`competitor_id = any(...)`, the own series apart) instead of one per series and edge
// day; the per-series days (sd, cd) as before. Measured the same as the endpoint's text
// (docs/BENCHMARKS.md, "Issue 26: trends, where the statement's time is not").
export function variant(text) {
  const a = text.indexOf('rw as (');
  const b = text.indexOf('\n),', a) + 3;
  const old = text.slice(a, b);
  const sel = `o.observed_at, o.id, o.price, o.currency, o.in_stock, o.samples,
         coalesce(o.price_sum / o.samples, o.price) as mean`;
  const common = old.match(/\('a30'[\s\S]*?\('p30d'[^\n]*\n/)[0].replace(/,\s*$/, '');
  const perSeries = old
    .match(/\('sd'[\s\S]*?w \(key, range, lo, hi\)/)[0]
    .replace("('sd', null,", "('sd', null::integer,");
  const seriesLateral = old.slice(
    old.indexOf('cross join lateral (select o.*'),
    old.indexOf('   where w.lo is not null'),
  );
  const rw = `rw as (
  select o.series, w.key, w.range, ${sel}
    from bd b
    cross join lateral (values ${common}) w (key, range, lo, hi)
    cross join lateral (select o.competitor_id as series, o.* from price_observations o
            where o.product_id = $2 and o.account_id = $1 and o.competitor_id = any (array(select sa.series from sa where sa.series <> ''))
              and o.observed_at >= w.lo and o.observed_at < w.hi
           union all
           select '' as series, o.* from price_observations o
            where o.product_id = $2 and o.account_id = $1 and o.competitor_id is null and exists (select from sa where sa.series = '')
              and o.observed_at >= w.lo and o.observed_at < w.hi) o
   where w.lo is not null
  union all
  select sa.series, w.key, w.range, ${sel}
    from sa
    cross join lateral (values ${perSeries}
    ${seriesLateral}   where w.lo is not null
),`;
  return { anyRw: text.replace(old, rw) };
}
