-- Local days of the zones the operator lists (HISTORY_ZONES, docs/prices/HISTORY.md "Day buckets
-- away from UTC"): a cache of price_hours, as price_blocks (migrations/0022) is one of price_days,
-- so a year of day buckets in Europe/Berlin reads ~4 000 rows instead of ~96 000 hours.
--
-- One row per product, series, currency, zone and local day holds what the history statement
-- merges of the day's hour rows of that currency: open and close with the (at, id) that orders
-- them, min, max, count and total. `day` and `day_end` are the local day's first instant and the
-- next day's (23 or 25 hours apart on a DST change), `local_day` its date in the zone (the
-- bucket's number is its distance from the range's first date). Only zones whose offset is a
-- whole number of hours: a local day is then a union of whole UTC hours (src/config.ts refuses
-- the others; the build skips any day whose bounds are not whole hours all the same).
--
-- Only a cache: the statement reads a local day's rows when the product has rows for it in the
-- zone, and its hours otherwise, so the answer never depends on whether a day was built. A day
-- is built for every series of the product at once (price_local_days_build, by the background
-- task and the tests), and only once it ended an hour before the build's transaction began; any
-- change of an hour row (an insert, a late observation, a delete, an update, the roll-up's
-- rewrite, a cascade) deletes the rows of its product whose local day holds the hour, in every
-- zone, in the same statement (the statement triggers below), so "the product has rows for this
-- local day" means all of them are those of the hours there now.
--
-- Partitioned by month of `day` (the local day's first instant) beside price_hours: created,
-- filled from the default partition and dropped with them by src/prices/partitions. A local day
-- lies in at most two UTC months, that of its start and the next one; dropping month M drops the
-- days starting in M with it, and retention's hook deletes before the detach the ones starting
-- earlier that reach into M (src/prices/partitions: at most a day's rows per product and zone,
-- in the month before M, which retention dropped already, or the default partition). The
-- month's hours go whole, and the rows left hold none of them.

create table price_local_days (
  account_id    text not null references accounts (id) on delete cascade,
  product_id    text not null references products (id) on delete cascade,
  competitor_id text references competitors (id) on delete cascade,
  series        text not null,
  currency      text not null,
  zone          text not null,
  day           timestamptz not null,
  day_end       timestamptz not null,
  local_day     date not null,
  open_at       timestamptz(3) not null,
  open_id       bigint not null,
  open          numeric(19, 4) not null,
  close_at      timestamptz(3) not null,
  close_id      bigint not null,
  close         numeric(19, 4) not null,
  min           numeric(19, 4) not null,
  max           numeric(19, 4) not null,
  count         bigint not null,
  total         numeric not null,
  primary key (product_id, zone, day, series, currency)
) partition by range (day);

create table price_local_days_default partition of price_local_days default;
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
    execute format('create table %I partition of price_local_days %s',
                   replace(m.name, 'price_observations_', 'price_local_days_'), m.bound);
  end loop;
end
$$;
create index price_local_days_competitor on price_local_days (competitor_id) where competitor_id is not null;
create index price_local_days_account on price_local_days (account_id);

-- The local days in `p_zones` of the given products that ended by `p_to`, begin no earlier than
-- the local day holding `p_since`, hold hour rows and have no rows here: from each product's first
-- hour (one index probe) a local day at a time (one probe each for an hour in it, the days built
-- read once), with no time zone work per hour row. Days whose bounds are not whole UTC hours are never built.
create function price_local_days_todo(p_products text[], p_zones text[], p_to timestamptz, p_since timestamptz)
returns table (product_id text, zone text, day timestamptz, day_end timestamptz, local_day date)
language sql stable as $$
  select t.*
    from (select f.product_id, z.zone, l.l at time zone z.zone as day, (l.l + interval '1 day') at time zone z.zone as day_end,
                 l.l::date as local_day
            from unnest(p_products) as f (product_id)
           cross join unnest(p_zones) as z (zone)
           cross join lateral (select min(h.hour) as first from price_hours h
                                where h.product_id = f.product_id and h.hour >= p_since - interval '1 day'
                                  and h.hour < p_to) m
           cross join lateral generate_series(date_trunc('day', greatest(m.first, p_since) at time zone z.zone),
                                              p_to at time zone z.zone, interval '1 day') as l (l)
           where m.first is not null) t
    -- The days built, read once (an anti join probing per day filtered every row of the product).
    left join (select distinct l.product_id, l.zone, l.day from price_local_days l
                where l.product_id = any (p_products) and l.zone = any (p_zones)
                  and l.day >= p_since - interval '1 day' and l.day < p_to) b
      on b.product_id = t.product_id and b.zone = t.zone and b.day = t.day
   where b.day is null and t.day_end <= p_to
     and date_trunc('hour', t.day, 'UTC') = t.day and date_trunc('hour', t.day_end, 'UTC') = t.day_end
     and exists (select 1 from price_hours h where h.product_id = t.product_id and h.hour >= t.day and h.hour < t.day_end)
$$;

-- Builds the missing local days in `p_zones` of the given products that ended an hour before
-- `p_before` (never later than this transaction's start) and begin no earlier than the local day
-- holding `p_since`, from their hour rows; returns how many rows it wrote. Idempotent: a local
-- day the product already has rows for is left as it is.
create function price_local_days_build(p_products text[], p_zones text[], p_before timestamptz,
                                       p_since timestamptz default '-infinity')
returns integer
language plpgsql as $$
declare
  n integer;
  v_to timestamptz;
begin
  -- The margin of an hour: the hour rows' trigger skips the hours that began less than two
  -- hours before its statement (they lie in no day that could have been built), so ingestion of
  -- the current hour, and of the previous one's stragglers, stops at its first query.
  v_to := least(p_before, now()) - interval '1 hour';
  -- Nothing to build (the usual hourly run within a day): no lock taken.
  perform 1 from price_local_days_todo(p_products, p_zones, v_to, p_since) limit 1;
  if not found then
    return 0;
  end if;
  -- No writer of the products' hour rows between the insert's snapshot and the commit: a day
  -- built from older hour rows would stay. The locks of price_blocks_build (migrations/0022),
  -- in the same order: the series, then the products.
  perform 1 from price_series s where s.product_id = any (p_products)
    order by s.product_id, s.competitor_id for share;
  perform 1 from products p where p.id = any (p_products) order by p.id for update;
  insert into price_local_days (account_id, product_id, competitor_id, series, currency, zone, day, day_end, local_day,
                                open_at, open_id, open, close_at, close_id, close, min, max, count, total)
  select min(h.account_id), h.product_id, min(h.competitor_id), h.series, h.currency, t.zone, t.day, min(t.day_end),
         min(t.local_day),
         (array_agg(h.open_at order by h.open_at, h.open_id))[1], (array_agg(h.open_id order by h.open_at, h.open_id))[1],
         (array_agg(h.open order by h.open_at, h.open_id))[1],
         (array_agg(h.close_at order by h.close_at desc, h.close_id desc))[1],
         (array_agg(h.close_id order by h.close_at desc, h.close_id desc))[1],
         (array_agg(h.close order by h.close_at desc, h.close_id desc))[1],
         min(h.min), max(h.max), sum(h.count), sum(h.total)
    from price_local_days_todo(p_products, p_zones, v_to, p_since) t
    join price_hours h on h.product_id = t.product_id and h.hour >= t.day and h.hour < t.day_end
   group by h.product_id, t.zone, t.day, h.series, h.currency
   order by h.product_id, t.zone, t.day, h.series, h.currency;
  get diagnostics n = row_count;
  return n;
end
$$;

-- Any change of hour rows drops the local days of their product that hold them, in every zone,
-- in the same statement. Local days exist only once ended an hour before their build began
-- (price_local_days_build), and this runs once the writer holds the locks the build takes, so
-- an hour that began less than two hours ago has none to drop: in-order ingestion into the
-- current hour stops at the first query. The delete names the products and the days' range,
-- so it probes the key of their months' partitions only (as price_blocks_dropped).
create function price_local_days_dropped() returns trigger language plpgsql as $$
declare
  v_lo timestamptz;
  v_hi timestamptz;
begin
  select min(c.hour), max(c.hour) into v_lo, v_hi from changed c where c.hour <= clock_timestamp() - interval '2 hours';
  if v_lo is null then
    return null;
  end if;
  -- A local day is at most 25 hours long: one holding v_lo began after v_lo - 25 hours. Joined
  -- to the distinct changed hours by product (a hash join), not probed once per candidate row.
  delete from price_local_days l
   using (select distinct c.product_id, c.hour from changed c where c.hour >= v_lo and c.hour <= v_hi) c
   where l.product_id = any (array(select distinct c.product_id from changed c where c.hour >= v_lo and c.hour <= v_hi))
     and l.day > v_lo - interval '25 hours' and l.day <= v_hi
     and l.product_id = c.product_id and c.hour >= l.day and c.hour < l.day_end;
  return null;
end
$$;

create trigger price_hours_local_days_inserted after insert on price_hours
  referencing new table as changed for each statement execute function price_local_days_dropped();
create trigger price_hours_local_days_updated after update on price_hours
  referencing new table as changed for each statement execute function price_local_days_dropped();
create trigger price_hours_local_days_deleted after delete on price_hours
  referencing old table as changed for each statement execute function price_local_days_dropped();
