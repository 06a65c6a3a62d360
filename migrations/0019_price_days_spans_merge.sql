-- price_days' trends columns (migrations/0018) kept by MERGING an in-order insert instead of
-- recomputing the day from its raw rows (docs/prices/TRENDS.md, "Trends from aggregates").
--
-- 0018's insert trigger recomputed every series-day a statement touched from all the raw rows of
-- that day (a 1 000-row insert ran at 0.61 of the rows/s without it, docs/BENCHMARKS.md). Most
-- inserts are in order: every new row of a series-day comes after the day's last observation
-- by (observed_at, id). Then the day's figures change only by
-- - the span of that last observation (the predecessor), which ran to the day's end and now
--   runs to the first new row: its priced/out-of-stock/known microseconds (and priced_sum by its
--   mean) shrink by the difference, in the row of its currency;
-- - the new rows' own figures, their spans running to the next new row of the series-day (any
--   currency) or to the day's end: added to the sums and counts, their extremes compared with
--   the day's (price as float8, then the later instant, as 0018 orders them; new rows are later),
--   and the last new row of each currency becoming that currency's close.
-- These are the same integer microseconds and exact numeric products 0018 sums, so the columns
-- are exactly what a recomputation gives (test/prices/hours.test.ts compares them with the raw
-- rows, in-order batches included).
--
-- The order check and the predecessor need no raw row: before the statement's rows are merged
-- into the days, the series-day's currency row with the latest (close_at, close_id) holds the
-- day's last observation (its instant, id, currency, stock and mean price: close_in_stock,
-- close_mean). So the merge moves into the insert trigger of price_hours and price_days
-- (price_hours_inserted, 0017's, redefined below): one upsert of each touched day row, as before,
-- now carrying the trends columns too. A series-day that got a row at or before its last one (a
-- late observation) is recomputed after the upsert from its raw rows (price_days_spans, 0018), as
-- are deletes and updates (price_days_refresh, unchanged). 0018's separate insert trigger goes.
-- The series are locked by the statement's first trigger (price_observations_track updates their
-- price_series rows), so no concurrent insert into them runs between the check and the merge.

drop trigger price_observations_track_hours_spans on price_observations;
drop function price_days_spans_inserted();

create or replace function price_hours_inserted() returns trigger language plpgsql as $$
declare
  k_products text[];
  k_series   text[];
  k_days     timestamptz[];
  k_late     boolean[];
  k_first_at timestamptz[];
  p_at       timestamptz[];
  p_currency text[];
  p_in_stock boolean[];
  p_mean     numeric[];
begin
  insert into price_hours as h (account_id, product_id, competitor_id, series, currency, hour, open_at, open_id, open,
                                close_at, close_id, close, min, max, count, total)
  select min(account_id), product_id, min(competitor_id), coalesce(competitor_id, ''), currency,
         date_trunc('hour', observed_at, 'UTC'),
         min(observed_at), (array_agg(id order by observed_at, id))[1], (array_agg(price order by observed_at, id))[1],
         max(observed_at), (array_agg(id order by observed_at desc, id desc))[1],
         (array_agg(price order by observed_at desc, id desc))[1],
         min(price), max(price), sum(samples), sum(coalesce(price_sum, price * samples))
    from new_rows
   group by product_id, coalesce(competitor_id, ''), currency, date_trunc('hour', observed_at, 'UTC')
   order by product_id, date_trunc('hour', observed_at, 'UTC'), coalesce(competitor_id, ''), currency
  on conflict (product_id, hour, series, currency) do update set
     open_at = case when (excluded.open_at, excluded.open_id) < (h.open_at, h.open_id) then excluded.open_at else h.open_at end,
     open_id = case when (excluded.open_at, excluded.open_id) < (h.open_at, h.open_id) then excluded.open_id else h.open_id end,
     open = case when (excluded.open_at, excluded.open_id) < (h.open_at, h.open_id) then excluded.open else h.open end,
     close_at = case when (excluded.close_at, excluded.close_id) > (h.close_at, h.close_id) then excluded.close_at else h.close_at end,
     close_id = case when (excluded.close_at, excluded.close_id) > (h.close_at, h.close_id) then excluded.close_id else h.close_id end,
     close = case when (excluded.close_at, excluded.close_id) > (h.close_at, h.close_id) then excluded.close else h.close end,
     min = least(h.min, excluded.min),
     max = greatest(h.max, excluded.max),
     count = h.count + excluded.count,
     total = h.total + excluded.total;

  -- Each series-day of the statement against the day's last observation before it.
  select array_agg(k.product_id), array_agg(k.series), array_agg(k.day),
         array_agg(p.close_at is not null and (p.close_at, p.close_id) >= (k.first_at, k.first_id)),
         array_agg(k.first_at), array_agg(p.close_at), array_agg(p.currency), array_agg(p.close_in_stock),
         array_agg(p.close_mean)
    into k_products, k_series, k_days, k_late, k_first_at, p_at, p_currency, p_in_stock, p_mean
    from (select product_id, coalesce(competitor_id, '') as series, date_trunc('day', observed_at, 'UTC') as day,
                 min(observed_at) as first_at, (array_agg(id order by observed_at, id))[1] as first_id
            from new_rows
           group by 1, 2, 3) k
    left join lateral (
      select d.close_at, d.close_id, d.currency, d.close_in_stock, d.close_mean
        from price_days d
       where d.product_id = k.product_id and d.day = k.day and d.series = k.series
       order by d.close_at desc, d.close_id desc
       limit 1
    ) p on true;

  -- The days: 0017's merge of the hours' columns, and the trends columns merged as above (for a
  -- late series-day they are recomputed below).
  insert into price_days as d (account_id, product_id, competitor_id, series, currency, day, open_at, open_id, open,
                               close_at, close_id, close, min, max, count, total,
                               low, low_at, high, high_at, priced_min, priced_us, priced_sum, priced_n, priced_means,
                               oos_us, known_us, close_in_stock, close_mean)
  select g.account_id, g.product_id, g.competitor_id, g.series, g.currency, g.day, g.open_at, g.open_id, g.open,
         g.close_at, g.close_id, g.close, g.min, g.max, g.count, g.total,
         g.low, g.low_at, g.high, g.high_at, g.priced_min,
         g.priced_us + coalesce(a.priced_us, 0), g.priced_sum + coalesce(a.priced_sum, 0), g.priced_n, g.priced_means,
         g.oos_us + coalesce(a.oos_us, 0), g.known_us + coalesce(a.known_us, 0), g.close_in_stock, g.close_mean
    from (
      select min(n.account_id) as account_id, n.product_id, min(n.competitor_id) as competitor_id, n.series, n.currency, n.day,
             min(n.observed_at) as open_at, (array_agg(n.id order by n.observed_at, n.id))[1] as open_id,
             (array_agg(n.price order by n.observed_at, n.id))[1] as open,
             max(n.observed_at) as close_at, (array_agg(n.id order by n.observed_at desc, n.id desc))[1] as close_id,
             (array_agg(n.price order by n.observed_at desc, n.id desc))[1] as close,
             min(n.price) as min, max(n.price) as max, sum(n.samples) as count,
             sum(coalesce(n.price_sum, n.price * n.samples)) as total,
             (array_agg(n.price order by n.price::float8, n.observed_at desc) filter (where n.in_stock is not false))[1] as low,
             (array_agg(n.observed_at order by n.price::float8, n.observed_at desc) filter (where n.in_stock is not false))[1] as low_at,
             (array_agg(n.price order by n.price::float8 desc, n.observed_at desc) filter (where n.in_stock is not false))[1] as high,
             (array_agg(n.observed_at order by n.price::float8 desc, n.observed_at desc) filter (where n.in_stock is not false))[1] as high_at,
             min(n.price) filter (where n.in_stock is not false) as priced_min,
             coalesce(sum(n.us) filter (where n.in_stock is not false), 0) as priced_us,
             coalesce(sum(n.mean * n.us) filter (where n.in_stock is not false), 0) as priced_sum,
             count(*) filter (where n.in_stock is not false) as priced_n,
             coalesce(sum(n.mean) filter (where n.in_stock is not false), 0) as priced_means,
             coalesce(sum(n.us) filter (where n.in_stock = false), 0) as oos_us,
             coalesce(sum(n.us) filter (where n.in_stock is not null), 0) as known_us,
             (array_agg(n.in_stock order by n.observed_at desc, n.id desc))[1] as close_in_stock,
             (array_agg(n.mean order by n.observed_at desc, n.id desc))[1] as close_mean
        from (
          -- Each new row spans to the series-day's next new row (any currency) or the day's end.
          select r.*, coalesce(r.price_sum / r.samples, r.price) as mean,
                 (extract(epoch from coalesce(lead(r.observed_at) over w, r.day + interval '24 hours') - r.observed_at)
                   * 1000000)::bigint as us
            from (select r.*, coalesce(r.competitor_id, '') as series, date_trunc('day', r.observed_at, 'UTC') as day
                    from new_rows r) r
          window w as (partition by r.product_id, r.series, r.day order by r.observed_at, r.id)
        ) n
       group by n.product_id, n.series, n.currency, n.day
    ) g
    -- An in-order series-day's predecessor in this currency: its span now ends at the first new row.
    left join (
      select u.product_id, u.series, u.day, u.currency,
             case when u.in_stock is not false then u.us end as priced_us,
             case when u.in_stock is not false then u.mean * u.us end as priced_sum,
             case when u.in_stock = false then u.us end as oos_us,
             case when u.in_stock is not null then u.us end as known_us
        from (select u.*, (extract(epoch from u.first_at - u.at) * 1000000)::bigint
                          - (extract(epoch from u.day + interval '24 hours' - u.at) * 1000000)::bigint as us
                from unnest(k_products, k_series, k_days, k_late, k_first_at, p_at, p_currency, p_in_stock, p_mean)
                       as u (product_id, series, day, late, first_at, at, currency, in_stock, mean)
               where not u.late and u.at is not null) u
    ) a on a.product_id = g.product_id and a.series = g.series and a.day = g.day and a.currency = g.currency
   order by g.product_id, g.day, g.series, g.currency
  on conflict (product_id, day, series, currency) do update set
     open_at = case when (excluded.open_at, excluded.open_id) < (d.open_at, d.open_id) then excluded.open_at else d.open_at end,
     open_id = case when (excluded.open_at, excluded.open_id) < (d.open_at, d.open_id) then excluded.open_id else d.open_id end,
     open = case when (excluded.open_at, excluded.open_id) < (d.open_at, d.open_id) then excluded.open else d.open end,
     close_at = case when (excluded.close_at, excluded.close_id) > (d.close_at, d.close_id) then excluded.close_at else d.close_at end,
     close_id = case when (excluded.close_at, excluded.close_id) > (d.close_at, d.close_id) then excluded.close_id else d.close_id end,
     close = case when (excluded.close_at, excluded.close_id) > (d.close_at, d.close_id) then excluded.close else d.close end,
     min = least(d.min, excluded.min),
     max = greatest(d.max, excluded.max),
     count = d.count + excluded.count,
     total = d.total + excluded.total,
     low = case when excluded.low is not null and (d.low is null or excluded.low::float8 < d.low::float8
                     or (excluded.low::float8 = d.low::float8 and excluded.low_at > d.low_at)) then excluded.low else d.low end,
     low_at = case when excluded.low is not null and (d.low is null or excluded.low::float8 < d.low::float8
                     or (excluded.low::float8 = d.low::float8 and excluded.low_at > d.low_at)) then excluded.low_at else d.low_at end,
     high = case when excluded.high is not null and (d.high is null or excluded.high::float8 > d.high::float8
                     or (excluded.high::float8 = d.high::float8 and excluded.high_at > d.high_at)) then excluded.high else d.high end,
     high_at = case when excluded.high is not null and (d.high is null or excluded.high::float8 > d.high::float8
                     or (excluded.high::float8 = d.high::float8 and excluded.high_at > d.high_at)) then excluded.high_at else d.high_at end,
     priced_min = least(d.priced_min, excluded.priced_min),
     priced_us = d.priced_us + excluded.priced_us,
     priced_sum = d.priced_sum + excluded.priced_sum,
     priced_n = d.priced_n + excluded.priced_n,
     priced_means = d.priced_means + excluded.priced_means,
     oos_us = d.oos_us + excluded.oos_us,
     known_us = d.known_us + excluded.known_us,
     close_in_stock = excluded.close_in_stock,
     close_mean = excluded.close_mean;

  -- An in-order series-day's predecessor in a currency the statement brought no row in (a
  -- currency switch within the day).
  update price_days d set
         priced_us = d.priced_us + case when u.in_stock is not false then u.us else 0 end,
         priced_sum = d.priced_sum + case when u.in_stock is not false then u.mean * u.us else 0 end,
         oos_us = d.oos_us + case when u.in_stock = false then u.us else 0 end,
         known_us = d.known_us + case when u.in_stock is not null then u.us else 0 end
    from (select u.product_id, u.series, u.day, u.currency, u.in_stock, u.mean,
                 (extract(epoch from u.first_at - u.at) * 1000000)::bigint
                 - (extract(epoch from u.day + interval '24 hours' - u.at) * 1000000)::bigint as us
            from unnest(k_products, k_series, k_days, k_late, k_first_at, p_at, p_currency, p_in_stock, p_mean)
                   as u (product_id, series, day, late, first_at, at, currency, in_stock, mean)
           where not u.late and u.at is not null
             and not exists (select 1 from new_rows n
                              where n.product_id = u.product_id and coalesce(n.competitor_id, '') = u.series
                                and n.currency = u.currency and date_trunc('day', n.observed_at, 'UTC') = u.day)) u
   where d.product_id = u.product_id and d.day = u.day and d.series = u.series and d.currency = u.currency;

  -- Late rows: their series' days again from the raw rows.
  perform price_days_spans(array_agg(u.product_id), array_agg(u.series), array_agg(u.day))
     from unnest(k_products, k_series, k_days, k_late) as u (product_id, series, day, late)
    where u.late
   having count(*) > 0;
  return null;
end
$$;
