-- Daily aggregates of price observations (docs/prices/HISTORY.md, "Daily aggregates").
--
-- One row per series (product, competitor; '' for our own shop), currency and UTC day with
-- observations, in the shape of price_hours (migrations/0015): the first and last observation
-- of the day by (observed_at, id) with their prices, the lowest and highest price, the count
-- (sum of samples) and the exact sum of prices. A day row is the merge of that day's hours, so
-- a bucket made of whole UTC days reads one row a day instead of one an hour, and any bucket
-- whose boundaries are whole UTC hours reads its whole days here and its edge hours in
-- price_hours.
--
-- Kept in the transaction of every statement that writes observations, by the functions the
-- price_hours triggers already run (redefined below, so hours and days change together):
-- - an insert merges its new rows into their days straight from the statement's rows (the same
--   order-free merge as the hours: one upsert per series, currency and day touched), so a late
--   observation is just merged in;
-- - a delete or update recomputes the hours it touched from the observations left
--   (price_hours_refresh), then the days of those hours from the hours left (at most 24 rows a
--   day, never the raw rows of a whole day): price_days_refresh.
-- Partitioned by month beside price_observations and price_hours (a UTC day lies in one UTC
-- month): created, filled from the default partition and dropped with them by
-- src/prices/partitions, so a dropped month takes its days along.

create table price_days (
  account_id    text not null references accounts (id) on delete cascade,
  product_id    text not null references products (id) on delete cascade,
  competitor_id text references competitors (id) on delete cascade,
  -- competitor_id, '' for our own shop: a key column cannot be null.
  series        text not null,
  currency      text not null,
  day           timestamptz not null,
  open_at       timestamptz(3) not null,
  open_id       bigint not null,
  open          numeric(19, 4) not null,
  close_at      timestamptz(3) not null,
  close_id      bigint not null,
  close         numeric(19, 4) not null,
  min           numeric(19, 4) not null,
  max           numeric(19, 4) not null,
  count         bigint not null,
  total         numeric(28, 4) not null,
  primary key (product_id, day, series, currency)
) partition by range (day);

create table price_days_default partition of price_days default;
do $$
declare
  m record;
begin
  for m in
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'price_observations'::regclass and c.relname ~ '^price_observations_p[0-9]{6}$'
     order by c.relname
  loop
    execute format('create table %I partition of price_days %s',
                   replace(m.name, 'price_observations_', 'price_days_'), m.bound);
  end loop;
end
$$;
create index price_days_competitor on price_days (competitor_id) where competitor_id is not null;
create index price_days_account on price_days (account_id);

-- Recomputes the days of the given hours (product, series, currency, any instant of the UTC
-- day) from the hours left: a day with none left goes. Called after the hours were refreshed,
-- with the series already locked by price_hours_refresh.
create function price_days_refresh(p_products text[], p_series text[], p_currencies text[], p_hours timestamptz[])
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
end
$$;

-- 0015's insert trigger function, now merging the statement's rows into their days too.
create or replace function price_hours_inserted() returns trigger language plpgsql as $$
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

  insert into price_days as d (account_id, product_id, competitor_id, series, currency, day, open_at, open_id, open,
                               close_at, close_id, close, min, max, count, total)
  select min(account_id), product_id, min(competitor_id), coalesce(competitor_id, ''), currency,
         date_trunc('day', observed_at, 'UTC'),
         min(observed_at), (array_agg(id order by observed_at, id))[1], (array_agg(price order by observed_at, id))[1],
         max(observed_at), (array_agg(id order by observed_at desc, id desc))[1],
         (array_agg(price order by observed_at desc, id desc))[1],
         min(price), max(price), sum(samples), sum(coalesce(price_sum, price * samples))
    from new_rows
   group by product_id, coalesce(competitor_id, ''), currency, date_trunc('day', observed_at, 'UTC')
   order by product_id, date_trunc('day', observed_at, 'UTC'), coalesce(competitor_id, ''), currency
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
     total = d.total + excluded.total;
  return null;
end
$$;

-- 0015's refresh, now refreshing the days of the hours it recomputed (last).
create or replace function price_hours_refresh(p_products text[], p_series text[], p_currencies text[], p_hours timestamptz[])
returns void language plpgsql as $$
begin
  perform 1
     from price_series s
     join (select distinct u.product_id, u.series from unnest(p_products, p_series) as u (product_id, series)) k
       on k.product_id = s.product_id and k.series = coalesce(s.competitor_id, '')
    order by s.product_id, s.competitor_id
      for update of s;

  insert into price_hours as h (account_id, product_id, competitor_id, series, currency, hour, open_at, open_id, open,
                                close_at, close_id, close, min, max, count, total)
  select min(o.account_id), o.product_id, min(o.competitor_id), k.series, o.currency, k.hour,
         min(o.observed_at), (array_agg(o.id order by o.observed_at, o.id))[1],
         (array_agg(o.price order by o.observed_at, o.id))[1],
         max(o.observed_at), (array_agg(o.id order by o.observed_at desc, o.id desc))[1],
         (array_agg(o.price order by o.observed_at desc, o.id desc))[1],
         min(o.price), max(o.price), sum(o.samples), sum(coalesce(o.price_sum, o.price * o.samples))
    from (select distinct * from unnest(p_products, p_series, p_currencies, p_hours) as u (product_id, series, currency, hour)) k
    cross join lateral (
      select * from price_observations o
       where o.product_id = k.product_id and o.competitor_id = k.series and k.series <> ''
         and o.observed_at >= k.hour and o.observed_at < k.hour + interval '1 hour' and o.currency = k.currency
      union all
      select * from price_observations o
       where o.product_id = k.product_id and o.competitor_id is null and k.series = ''
         and o.observed_at >= k.hour and o.observed_at < k.hour + interval '1 hour' and o.currency = k.currency
    ) o
   group by o.product_id, k.series, o.currency, k.hour
   order by o.product_id, k.hour, k.series, o.currency
  on conflict (product_id, hour, series, currency) do update set
     open_at = excluded.open_at, open_id = excluded.open_id, open = excluded.open,
     close_at = excluded.close_at, close_id = excluded.close_id, close = excluded.close,
     min = excluded.min, max = excluded.max, count = excluded.count, total = excluded.total;

  delete from price_hours h
   using unnest(p_products, p_series, p_currencies, p_hours) as k (product_id, series, currency, hour)
   where h.product_id = k.product_id and h.hour = k.hour and h.series = k.series and h.currency = k.currency
     and not exists (
       select 1 from price_observations o
        where o.product_id = k.product_id and o.competitor_id = k.series and k.series <> ''
          and o.observed_at >= k.hour and o.observed_at < k.hour + interval '1 hour' and o.currency = k.currency
       union all
       select 1 from price_observations o
        where o.product_id = k.product_id and o.competitor_id is null and k.series = ''
          and o.observed_at >= k.hour and o.observed_at < k.hour + interval '1 hour' and o.currency = k.currency
     );

  perform price_days_refresh(p_products, p_series, p_currencies, p_hours);
end
$$;

-- The days of the hours already built (0015 built them from every observation).
insert into price_days (account_id, product_id, competitor_id, series, currency, day, open_at, open_id, open,
                        close_at, close_id, close, min, max, count, total)
select min(account_id), product_id, min(competitor_id), series, currency, date_trunc('day', hour, 'UTC'),
       min(open_at), (array_agg(open_id order by open_at, open_id))[1], (array_agg(open order by open_at, open_id))[1],
       max(close_at), (array_agg(close_id order by close_at desc, close_id desc))[1],
       (array_agg(close order by close_at desc, close_id desc))[1],
       min(min), max(max), sum(count), sum(total)
  from price_hours
 group by product_id, series, currency, date_trunc('day', hour, 'UTC');
