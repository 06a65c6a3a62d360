-- Each day's carry kept in its day row (docs/prices/TRENDS.md, "Trends from aggregates"), so the
-- trends statement reads it in its one grouped pass over the day rows instead of sorting the
-- days' closing rows with windows to pair each day with the next one.
--
-- A day's carry is the time from the end of a series' day with observations to the first
-- observation of its next day with observations, held by the first day's last observation (any
-- currency). It is now kept on the day it ends in: the *opening* row of a series-day (the
-- currency row with the day's first observation, by (open_at, open_id)) holds the closing state
-- of the series' previous day row (the currency row with that day's last observation, by
-- (close_at, close_id)):
--   prev_day       that previous day (null: no earlier day row, and on every other currency row);
--   prev_currency, prev_in_stock, prev_mean: its last observation's currency, stock and mean
--                  price (close_mean).
-- The carry of the day before is then [prev_day + 24 hours, open_at), in exact microseconds as
-- every span.
--
-- Kept by price_days_carries (below): given series-days, it sets these columns on every row of
-- each of those days and of the next day row after each, from the previous day row's closing
-- row. Called by the insert trigger for the series-days a statement created, got late rows in,
-- or that are not the series' latest day (an in-order row added to the series' latest day changes
-- neither that day's opening row nor any later day: there is none), and by price_days_refresh
-- after deletes and updates. Retention's drop of whole months leaves the first day row after
-- the month pointing into it; the trends statement counts a carry only when its previous day is
-- not older than the series' oldest day row (src/prices/trends/days.ts, k_ok), as the raw
-- computation then has no observation before the first one left. Clearing them instead would
-- update one row per series in the detaching transaction, which holds the live tables.

alter table price_days
  add column prev_day      timestamptz,
  add column prev_currency text,
  add column prev_in_stock boolean,
  add column prev_mean     numeric;

-- The probes of price_days_carries (a series' previous and next day rows).
create index price_days_series_day on price_days (product_id, series, day);

-- Sets the carry columns of every currency row of the given series' UTC days (product, series,
-- any instant of the day) and of the next day row of the series after each.
create function price_days_carries(p_products text[], p_series text[], p_days timestamptz[])
returns void language plpgsql as $$
begin
  update price_days d set
         prev_day = c.prev_day, prev_currency = c.prev_currency, prev_in_stock = c.prev_in_stock, prev_mean = c.prev_mean
    from (
      select t.product_id, t.series, t.day, r.currency,
             case when r.opening then p.day end as prev_day,
             case when r.opening then p.currency end as prev_currency,
             case when r.opening then p.close_in_stock end as prev_in_stock,
             case when r.opening then p.close_mean end as prev_mean
        from (
          select distinct k.product_id, k.series, x.day
            from (select distinct u.product_id, u.series, date_trunc('day', u.day, 'UTC') as day
                    from unnest(p_products, p_series, p_days) as u (product_id, series, day)) k
           cross join lateral (
             select k.day
             union all
             (select n.day from price_days n
               where n.product_id = k.product_id and n.series = k.series and n.day > k.day
               order by n.day limit 1)
           ) x
        ) t
        left join lateral (
          select p.day, p.currency, p.close_in_stock, p.close_mean from price_days p
           where p.product_id = t.product_id and p.series = t.series and p.day < t.day
           order by p.day desc, p.close_at desc, p.close_id desc
           limit 1
        ) p on true
        join lateral (
          select r.currency, row_number() over (order by r.open_at, r.open_id) = 1 as opening
            from price_days r
           where r.product_id = t.product_id and r.series = t.series and r.day = t.day
        ) r on true
    ) c
   where d.product_id = c.product_id and d.day = c.day and d.series = c.series and d.currency = c.currency
     and (d.prev_day, d.prev_currency, d.prev_in_stock, d.prev_mean)
         is distinct from (c.prev_day, c.prev_currency, c.prev_in_stock, c.prev_mean);
end
$$;

-- Every day row's carry columns of an account (all accounts when null) in one pass: the
-- backfill below, and the benchmark's seed.
create function price_days_carries_rebuild(p_account text) returns void language plpgsql as $$
begin
  update price_days d set
         prev_day = c.prev_day, prev_currency = c.prev_currency, prev_in_stock = c.prev_in_stock, prev_mean = c.prev_mean
    from (
      select o.product_id, o.series, o.day, o.currency,
             case when o.opening then cl.prev_day end as prev_day,
             case when o.opening then cl.prev_currency end as prev_currency,
             case when o.opening then cl.prev_in_stock end as prev_in_stock,
             case when o.opening then cl.prev_mean end as prev_mean
        from (
          select r.product_id, r.series, r.day, r.currency,
                 row_number() over (partition by r.product_id, r.series, r.day order by r.open_at, r.open_id) = 1 as opening
            from price_days r
           where p_account is null or r.account_id = p_account
        ) o
        join (
          select x.product_id, x.series, x.day,
                 lag(x.day) over w as prev_day, lag(x.currency) over w as prev_currency,
                 lag(x.close_in_stock) over w as prev_in_stock, lag(x.close_mean) over w as prev_mean
            from (
              select distinct on (r.product_id, r.series, r.day) r.product_id, r.series, r.day, r.currency,
                     r.close_in_stock, r.close_mean
                from price_days r
               where p_account is null or r.account_id = p_account
               order by r.product_id, r.series, r.day, r.close_at desc, r.close_id desc
            ) x
          window w as (partition by x.product_id, x.series order by x.day)
        ) cl on cl.product_id = o.product_id and cl.series = o.series and cl.day = o.day
    ) c
   where d.product_id = c.product_id and d.day = c.day and d.series = c.series and d.currency = c.currency
     and (d.prev_day, d.prev_currency, d.prev_in_stock, d.prev_mean)
         is distinct from (c.prev_day, c.prev_currency, c.prev_in_stock, c.prev_mean);
end
$$;

-- 0018's refresh of the days after a delete or an update, now with their carries: a day gone
-- leaves the next day row's carry to the day before it.
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
  perform price_days_carries(p_products, p_series, p_hours);
end
$$;

-- 0019's insert trigger function, now with the carries.
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

  -- The carries (0021) of the series-days that are new, got late rows or are not their series'
  -- latest day (price_series was brought up to date by price_observations_track, which fires
  -- first), and of the next day row after each.
  perform price_days_carries(array_agg(u.product_id), array_agg(u.series), array_agg(u.day))
     from unnest(k_products, k_series, k_days, k_late, p_at) as u (product_id, series, day, late, at)
    where u.late or u.at is null
       or not exists (select 1 from price_series s
                       where s.product_id = u.product_id and coalesce(s.competitor_id, '') = u.series
                         and date_trunc('day', s.latest_observed_at, 'UTC') = u.day)
   having count(*) > 0;
  return null;
end
$$;

-- The carries of the days already recorded.
select price_days_carries_rebuild(null);
