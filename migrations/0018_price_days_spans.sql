-- What trends need of a day (docs/prices/TRENDS.md, "Trends from aggregates"), beside the
-- history's columns of price_days (migrations/0017), for each series, currency and UTC day:
--
-- - low, low_at / high, high_at: the lowest and highest price of the day's observations that
--   could be bought (in_stock true or null), with the latest instant at that price; ordered as
--   the trends statement orders them (price as float8, then the instant);
-- - the time-weighted figures over the part of each observation's span inside the day: the
--   span of an observation runs to the series' next observation in any currency, and is cut at
--   the end of its UTC day (what holds past it belongs to the days it covers, which the trends
--   statement adds from the day's last observation: close_in_stock, close_mean). Exact:
--   microseconds as bigint, numeric sums.
--     priced_us, priced_sum: microseconds of priced spans (in stock or unknown) and the sum of
--       mean price x microseconds over them (mean price: price_sum / samples of a rolled-up row);
--     priced_n, priced_means: how many priced observations and the sum of their mean prices (the
--       average when no priced time passed: every span of zero length);
--     oos_us, known_us: microseconds out of stock, and of known stock (true or false);
--     close_in_stock, close_mean: the stock and mean price of the row's last observation.
--
-- Because a span is cut at the end of its day, a day's figures depend only on that day's
-- observations of the series (all currencies): an insert, delete or update recomputes exactly
-- the series' days it touched (price_days_spans), from the raw rows of those days. A late
-- observation shortens its predecessor's span only when both are in the same day, which is the
-- day it touched.

alter table price_days
  add column low            numeric(19, 4),
  add column low_at         timestamptz(3),
  add column high           numeric(19, 4),
  add column high_at        timestamptz(3),
  add column priced_min     numeric(19, 4),
  add column priced_us      bigint not null default 0,
  add column priced_sum     numeric not null default 0,
  add column priced_n       bigint not null default 0,
  add column priced_means   numeric not null default 0,
  add column oos_us         bigint not null default 0,
  add column known_us       bigint not null default 0,
  add column close_in_stock boolean,
  add column close_mean     numeric;

-- Recomputes the trends' columns of every currency row of the given series' UTC days (product,
-- series, any instant of the day) from the observations of those days.
create function price_days_spans(p_products text[], p_series text[], p_days timestamptz[])
returns void language plpgsql as $$
begin
  update price_days d set
         low = s.low, low_at = s.low_at, high = s.high, high_at = s.high_at, priced_min = s.priced_min,
         priced_us = s.priced_us, priced_sum = s.priced_sum, priced_n = s.priced_n, priced_means = s.priced_means,
         oos_us = s.oos_us, known_us = s.known_us, close_in_stock = s.close_in_stock, close_mean = s.close_mean
    from (
      select o.product_id, o.series, o.day, o.currency,
             (array_agg(o.price order by o.price::float8, o.observed_at desc) filter (where o.in_stock is not false))[1] as low,
             (array_agg(o.observed_at order by o.price::float8, o.observed_at desc) filter (where o.in_stock is not false))[1] as low_at,
             (array_agg(o.price order by o.price::float8 desc, o.observed_at desc) filter (where o.in_stock is not false))[1] as high,
             (array_agg(o.observed_at order by o.price::float8 desc, o.observed_at desc) filter (where o.in_stock is not false))[1] as high_at,
             min(o.price) filter (where o.in_stock is not false) as priced_min,
             coalesce(sum(o.us) filter (where o.in_stock is not false), 0)::bigint as priced_us,
             coalesce(sum(o.mean * o.us) filter (where o.in_stock is not false), 0) as priced_sum,
             count(*) filter (where o.in_stock is not false) as priced_n,
             coalesce(sum(o.mean) filter (where o.in_stock is not false), 0) as priced_means,
             coalesce(sum(o.us) filter (where o.in_stock = false), 0)::bigint as oos_us,
             coalesce(sum(o.us) filter (where o.in_stock is not null), 0)::bigint as known_us,
             (array_agg(o.in_stock order by o.observed_at desc, o.id desc))[1] as close_in_stock,
             (array_agg(o.mean order by o.observed_at desc, o.id desc))[1] as close_mean
        from (
          select k.product_id, k.series, k.day, o.id, o.currency, o.price, o.in_stock, o.observed_at,
                 coalesce(o.price_sum / o.samples, o.price) as mean,
                 (extract(epoch from coalesce(lead(o.observed_at) over w, k.day + interval '24 hours') - o.observed_at)
                   * 1000000)::bigint as us
            from (select distinct u.product_id, u.series, date_trunc('day', u.day, 'UTC') as day
                    from unnest(p_products, p_series, p_days) as u (product_id, series, day)) k
            cross join lateral (
              select * from price_observations o
               where o.product_id = k.product_id and o.competitor_id = k.series and k.series <> ''
                 and o.observed_at >= k.day and o.observed_at < k.day + interval '24 hours'
              union all
              select * from price_observations o
               where o.product_id = k.product_id and o.competitor_id is null and k.series = ''
                 and o.observed_at >= k.day and o.observed_at < k.day + interval '24 hours'
            ) o
          window w as (partition by k.product_id, k.series, k.day order by o.observed_at, o.id)
        ) o
       group by o.product_id, o.series, o.day, o.currency
    ) s
   where d.product_id = s.product_id and d.day = s.day and d.series = s.series and d.currency = s.currency;
end
$$;

-- 0017's refresh of the days (after a delete or an update), now with their spans.
create or replace function price_days_refresh(p_products text[], p_series text[], p_currencies text[], p_hours timestamptz[])
returns void language plpgsql as $$
begin
  insert into price_days as d (account_id, product_id, competitor_id, series, currency, day, open_at, open_id, open,
                               close_at, close_id, close, min, max, count, total)
  select min(h.account_id), h.product_id, min(h.competitor_id), k.series, h.currency, k.day,
         min(h.open_at), (array_agg(h.open_id order by h.open_at, h.open_id))[1],
         (array_agg(h.open order by h.open_at, h.open_id))[1],
         max(h.close_at), (array_agg(h.close_id order by h.close_at desc, h.close_id desc))[1],
         (array_agg(h.close order by h.close_at desc, h.close_id desc))[1],
         min(h.min), max(h.max), sum(h.count), sum(h.total)
    from (select distinct u.product_id, u.series, u.currency, date_trunc('day', u.hour, 'UTC') as day
            from unnest(p_products, p_series, p_currencies, p_hours) as u (product_id, series, currency, hour)) k
    join price_hours h
      on h.product_id = k.product_id and h.series = k.series and h.currency = k.currency
     and h.hour >= k.day and h.hour < k.day + interval '24 hours'
   group by h.product_id, k.series, h.currency, k.day
   order by h.product_id, k.day, k.series, h.currency
  on conflict (product_id, day, series, currency) do update set
     open_at = excluded.open_at, open_id = excluded.open_id, open = excluded.open,
     close_at = excluded.close_at, close_id = excluded.close_id, close = excluded.close,
     min = excluded.min, max = excluded.max, count = excluded.count, total = excluded.total;

  delete from price_days d
   using (select distinct u.product_id, u.series, u.currency, date_trunc('day', u.hour, 'UTC') as day
            from unnest(p_products, p_series, p_currencies, p_hours) as u (product_id, series, currency, hour)) k
   where d.product_id = k.product_id and d.day = k.day and d.series = k.series and d.currency = k.currency
     and not exists (
       select 1 from price_hours h
        where h.product_id = k.product_id and h.series = k.series and h.currency = k.currency
          and h.hour >= k.day and h.hour < k.day + interval '24 hours'
     );

  perform price_days_spans(p_products, p_series, p_hours);
end
$$;

-- 0015's update trigger function, now also when only the stock changed (the spans count it).
create or replace function price_hours_updated() returns trigger language plpgsql as $$
begin
  perform price_hours_refresh(array_agg(product_id), array_agg(coalesce(competitor_id, '')), array_agg(currency),
                              array_agg(date_trunc('hour', observed_at, 'UTC')))
     from (select o.product_id, o.competitor_id, o.currency, o.observed_at
             from old_rows o left join new_rows n on n.id = o.id
            where n.id is null
               or (o.product_id, o.competitor_id, o.currency, o.observed_at, o.price, o.samples, o.price_sum, o.in_stock)
                  is distinct from (n.product_id, n.competitor_id, n.currency, n.observed_at, n.price, n.samples, n.price_sum, n.in_stock)
           union all
           select n.product_id, n.competitor_id, n.currency, n.observed_at
             from new_rows n left join old_rows o on o.id = n.id
            where o.id is null
               or (o.product_id, o.competitor_id, o.currency, o.observed_at, o.price, o.samples, o.price_sum, o.in_stock)
                  is distinct from (n.product_id, n.competitor_id, n.currency, n.observed_at, n.price, n.samples, n.price_sum, n.in_stock)) d
   having count(*) > 0;
  return null;
end
$$;

-- After an insert: the spans of the series' days the statement touched, once their rows exist
-- (price_observations_track_hours merged them: triggers of one event fire in name order).
create function price_days_spans_inserted() returns trigger language plpgsql as $$
begin
  perform price_days_spans(array_agg(product_id), array_agg(series), array_agg(day))
     from (select distinct product_id, coalesce(competitor_id, '') as series, date_trunc('day', observed_at, 'UTC') as day
             from new_rows) d
   having count(*) > 0;
  return null;
end
$$;

create trigger price_observations_track_hours_spans
  after insert on price_observations
  referencing new table as new_rows
  for each statement execute function price_days_spans_inserted();

-- The days already built (0017), from their observations.
select price_days_spans(array_agg(product_id), array_agg(series), array_agg(day)) from price_days;
