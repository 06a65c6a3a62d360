-- Hourly aggregates of price observations (docs/prices/HISTORY.md, "Hourly aggregates").
--
-- One row per series (product, competitor; '' for our own shop), currency and UTC hour with
-- observations: the first and last observation of the hour by (observed_at, id) with their
-- prices, the lowest and highest price, the count (sum of samples) and the exact sum of prices
-- (sum of price_sum). That is everything a history bucket needs (open, close, min, max, count,
-- average), and every bucket made of whole UTC hours (hour buckets; day, week and month buckets
-- in any zone whose boundaries fall on whole UTC hours in the range) is the merge of its hours.
--
-- Kept in the transaction of every statement that writes observations, by the triggers below:
-- - an insert merges its new rows into their hours (one upsert per series, currency and hour
--   the statement touched; the merge is order-free, so a late observation is just merged in);
-- - a delete or update (the retention roll-up, a deleted product, the edge month of retention)
--   recomputes the hours it touched from the rows left.
-- Dropping a month partition fires no trigger: src/prices/partitions deletes that month's hours.

create table price_hours (
  account_id    text not null references accounts (id) on delete cascade,
  product_id    text not null references products (id) on delete cascade,
  competitor_id text references competitors (id) on delete cascade,
  -- competitor_id, '' for our own shop: a key column cannot be null.
  series        text not null,
  currency      text not null,
  hour          timestamptz not null,
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
  primary key (product_id, hour, series, currency)
) partition by range (hour);

-- Partitioned as price_observations is (migrations/0014): a month of hours is
-- price_hours_pYYYYMM beside price_observations_pYYYYMM, created, filled from the default
-- partition and dropped with it (src/prices/partitions), so retention drops both whole.
create table price_hours_default partition of price_hours default;
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
    execute format('create table %I partition of price_hours %s',
                   replace(m.name, 'price_observations_', 'price_hours_'), m.bound);
  end loop;
end
$$;
create index price_hours_competitor on price_hours (competitor_id) where competitor_id is not null;
create index price_hours_account on price_hours (account_id);

-- Merges a statement's new observations into their hours: one upsert per series, currency and
-- hour, in key order (the series are locked by then, by price_observations_track, which fires
-- first: triggers fire in name order).
create function price_hours_inserted() returns trigger language plpgsql as $$
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
  return null;
end
$$;

-- Recomputes the given hours (product, series, currency, UTC hour) from the observations left:
-- an hour with none left goes.
create function price_hours_refresh(p_products text[], p_series text[], p_currencies text[], p_hours timestamptz[])
returns void language plpgsql as $$
begin
  -- The series' locks first (those every writer of observations takes, in the same order), so
  -- an insert into one of these hours cannot commit between this count and its upsert: the
  -- statements below see it (each takes a new snapshot) or it waits and merges after.
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
end
$$;

create function price_hours_deleted() returns trigger language plpgsql as $$
begin
  perform price_hours_refresh(array_agg(product_id), array_agg(coalesce(competitor_id, '')), array_agg(currency),
                              array_agg(date_trunc('hour', observed_at, 'UTC')))
     from (select distinct product_id, competitor_id, currency, date_trunc('hour', observed_at, 'UTC') as observed_at
             from old_rows) d
   having count(*) > 0;
  return null;
end
$$;

-- Only rows whose aggregated columns changed (a deleted listing sets listing_id to null on
-- its observations: nothing to recompute).
create function price_hours_updated() returns trigger language plpgsql as $$
begin
  perform price_hours_refresh(array_agg(product_id), array_agg(coalesce(competitor_id, '')), array_agg(currency),
                              array_agg(date_trunc('hour', observed_at, 'UTC')))
     from (select o.product_id, o.competitor_id, o.currency, o.observed_at
             from old_rows o left join new_rows n on n.id = o.id
            where n.id is null
               or (o.product_id, o.competitor_id, o.currency, o.observed_at, o.price, o.samples, o.price_sum)
                  is distinct from (n.product_id, n.competitor_id, n.currency, n.observed_at, n.price, n.samples, n.price_sum)
           union all
           select n.product_id, n.competitor_id, n.currency, n.observed_at
             from new_rows n left join old_rows o on o.id = n.id
            where o.id is null
               or (o.product_id, o.competitor_id, o.currency, o.observed_at, o.price, o.samples, o.price_sum)
                  is distinct from (n.product_id, n.competitor_id, n.currency, n.observed_at, n.price, n.samples, n.price_sum)) d
   having count(*) > 0;
  return null;
end
$$;

-- Named after price_observations_track so they fire after it (same event, name order).
create trigger price_observations_track_hours
  after insert on price_observations
  referencing new table as new_rows
  for each statement execute function price_hours_inserted();
create trigger price_observations_track_hours_deleted
  after delete on price_observations
  referencing old table as old_rows
  for each statement execute function price_hours_deleted();
create trigger price_observations_track_hours_updated
  after update on price_observations
  referencing old table as old_rows new table as new_rows
  for each statement execute function price_hours_updated();

-- The hours of the observations already recorded.
insert into price_hours (account_id, product_id, competitor_id, series, currency, hour, open_at, open_id, open,
                         close_at, close_id, close, min, max, count, total)
select min(account_id), product_id, min(competitor_id), coalesce(competitor_id, ''), currency,
       date_trunc('hour', observed_at, 'UTC'),
       min(observed_at), (array_agg(id order by observed_at, id))[1], (array_agg(price order by observed_at, id))[1],
       max(observed_at), (array_agg(id order by observed_at desc, id desc))[1],
       (array_agg(price order by observed_at desc, id desc))[1],
       min(price), max(price), sum(samples), sum(coalesce(price_sum, price * samples))
  from price_observations
 group by product_id, coalesce(competitor_id, ''), currency, date_trunc('hour', observed_at, 'UTC');
