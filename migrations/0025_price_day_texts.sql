-- Month texts for the history's day buckets in UTC (docs/prices/HISTORY.md, "Month texts"): a
-- cache of the day rows (migrations/0017), as price_blocks (0022) is one for the trends, so a
-- year of daily history of 11 series reads ~130 rows of text instead of ~4 000 day rows and
-- writes no number per request.
--
-- One row per product, UTC month, series and currency holds that month's day rows of the
-- series and currency as the history's statement writes them into its answer (price_day_text,
-- below), in day order, joined by commas. A day's bucket number in that text is its day since
-- 1970-01-01, so the text does not depend on the range a request asks for; the server turns it
-- into the bucket's number (src/prices/history/sql.ts, parts()).
--
-- Only a cache: the statement reads a month's texts only when the month lies wholly inside the
-- range and the product has texts for it, and its day rows otherwise, so the answer never
-- depends on whether a month was built. A month is built for every series of a product at once
-- (price_day_texts_build, by the background task and the tests), and only once it has ended
-- before the build's UTC midnight; any change of a day row (an insert, a late observation, a
-- delete, an update, the roll-up's rewrite, a cascade) deletes the texts of its product and
-- month in the same statement (the statement triggers below), so "the product has texts for
-- this month" means all of them are those of the day rows there now.
--
-- Partitioned by month beside price_days: created, filled from the default partition and
-- dropped with them by src/prices/partitions. This migration only makes the schema: the
-- background task fills the texts (docs/SCALING.md, "Backfills of the roll-ups on a large
-- database"), and the statement reads the day rows meanwhile.

create table price_day_texts (
  account_id    text not null,
  product_id    text not null references products (id) on delete cascade,
  -- For the history's series filter; a competitor's deletion deletes its day rows, and so
  -- (by the triggers) the texts of their months.
  competitor_id text,
  series        text not null,
  currency      text not null,
  month         timestamptz not null,
  buckets       text not null,
  primary key (product_id, month, series, currency)
) partition by range (month);

create table price_day_texts_default partition of price_day_texts default;
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
    execute format('create table %I partition of price_day_texts %s',
                   replace(m.name, 'price_observations_', 'price_day_texts_'), m.bound);
  end loop;
end
$$;

-- A bucket's values as the history's answer carries them (src/prices/history/sql.ts, BucketRow):
-- open, close, min, max and average as JSON numbers, or only the open followed by four empty
-- fields when all five are the open (a bucket of one price); the average rounded half up to 4
-- decimals in exact integer arithmetic (prices are never negative). Inlined where it is called
-- (a SQL function of one expression: no call per row).
create function price_bucket_text(open numeric, close numeric, min numeric, max numeric, total numeric, count numeric)
returns text language sql stable parallel safe as $$
  select case when open = close and open = min and open = max and total = open * count
              then trim_scale(open)::text || ',,,,'
              else concat_ws(',', trim_scale(open)::text, trim_scale(close)::text, trim_scale(min)::text,
                             trim_scale(max)::text,
                             coalesce(trim_scale(div(total * 20000 + count, 2 * count) * 0.0001)::text, 'null')) end
$$;

-- A day row as the history's UTC days carry it: its day since 1970-01-01, its values, its count.
create function price_day_text(day timestamptz, open numeric, close numeric, min numeric, max numeric, total numeric,
                               count bigint)
returns text language sql stable parallel safe as $$
  select concat_ws(',', date_part('day', day - timestamptz '1970-01-01 00:00:00+00')::int,
                   price_bucket_text(open, close, min, max, total, count), count)
$$;

-- The UTC months of the given products that end by `p_to` (a month's first instant), begin no
-- earlier than `p_since` (a month's first instant, or -infinity), hold day rows and have no texts:
-- from each product's first day row (one index probe) a month at a time (a probe each for a text
-- and a day row), so a pass with nothing to build reads no day row. Month arithmetic in UTC.
create function price_day_texts_todo(p_products text[], p_to timestamptz, p_since timestamptz)
returns table (product_id text, month timestamptz, month_end timestamptz)
language sql stable as $$
  select f.product_id, g.m at time zone 'UTC', (g.m + interval '1 month') at time zone 'UTC'
    from unnest(p_products) as f (product_id)
   cross join lateral (select min(d.day) as first from price_days d
                        where d.product_id = f.product_id and d.day >= p_since and d.day < p_to) m
   cross join lateral generate_series(date_trunc('month', m.first at time zone 'UTC'),
                                      (p_to at time zone 'UTC') - interval '1 month', interval '1 month') as g (m)
   where m.first is not null
     and not exists (select 1 from price_day_texts t where t.product_id = f.product_id and t.month = g.m at time zone 'UTC')
     and exists (select 1 from price_days d
                  where d.product_id = f.product_id and d.day >= g.m at time zone 'UTC'
                    and d.day < (g.m + interval '1 month') at time zone 'UTC')
$$;

-- Builds the missing month texts of the given products for the UTC months that ended by
-- `p_before`'s UTC midnight (and begin no earlier than the month of `p_since`), from their day
-- rows; returns how many rows it wrote. Idempotent: a month the product already has texts for is
-- left as it is.
create function price_day_texts_build(p_products text[], p_before timestamptz, p_since timestamptz default '-infinity')
returns integer
language plpgsql as $$
declare
  n integer;
  v_from timestamptz;
  v_to timestamptz;
begin
  -- Months before the month of `p_before`'s midnight (never later than this transaction's own)
  -- have ended: the day rows' trigger counts on none being built before.
  v_to := date_trunc('month', date_trunc('day', least(p_before, now()), 'UTC'), 'UTC');
  v_from := case when p_since = '-infinity' then p_since else date_trunc('month', p_since, 'UTC') end;
  -- Nothing to build (the usual hourly run): no lock taken.
  perform 1 from price_day_texts_todo(p_products, v_to, v_from) limit 1;
  if not found then
    return 0;
  end if;
  -- No writer of the products' day rows between the insert's snapshot and the commit: texts
  -- built from older day rows would stay. The locks of price_blocks_build (migrations/0022), in
  -- the same order: the series, then the products.
  perform 1 from price_series s where s.product_id = any (p_products)
    order by s.product_id, s.competitor_id for share;
  perform 1 from products p where p.id = any (p_products) order by p.id for update;
  insert into price_day_texts (account_id, product_id, competitor_id, series, currency, month, buckets)
  select min(d.account_id), d.product_id, min(d.competitor_id), d.series, d.currency, t.month,
         string_agg(price_day_text(d.day, d.open, d.close, d.min, d.max, d.total, d.count), ',' order by d.day)
    from price_day_texts_todo(p_products, v_to, v_from) t
    join price_days d on d.product_id = t.product_id and d.day >= t.month and d.day < t.month_end
   group by d.product_id, t.month, d.series, d.currency
   order by d.product_id, t.month, d.series, d.currency;
  get diagnostics n = row_count;
  return n;
end
$$;

-- Any change of day rows drops the texts of their product and month, in the same statement.
-- Texts exist only for months that ended (price_day_texts_build: by its transaction's midnight),
-- and this runs once the writer holds the locks the build takes, so a day row of the current
-- month has none to drop: in-order ingestion stops at the first query. The delete names the
-- products and the months' range, so it probes the key of those months' partitions only (as
-- price_blocks_dropped).
create function price_day_texts_dropped() returns trigger language plpgsql as $$
declare
  v_lo timestamptz;
  v_hi timestamptz;
begin
  select min(c.day), max(c.day) into v_lo, v_hi
    from changed c where c.day < date_trunc('month', clock_timestamp(), 'UTC');
  if v_lo is null then
    return null;
  end if;
  delete from price_day_texts t
   where t.product_id = any (array(select distinct c.product_id from changed c where c.day >= v_lo and c.day <= v_hi))
     and t.month >= date_trunc('month', v_lo, 'UTC') and t.month <= v_hi
     and (t.product_id, t.month) in (select c.product_id, date_trunc('month', c.day, 'UTC') from changed c
                                      where c.day >= v_lo and c.day <= v_hi);
  return null;
end
$$;

create trigger price_days_texts_inserted after insert on price_days
  referencing new table as changed for each statement execute function price_day_texts_dropped();
create trigger price_days_texts_updated after update on price_days
  referencing new table as changed for each statement execute function price_day_texts_dropped();
create trigger price_days_texts_deleted after delete on price_days
  referencing old table as changed for each statement execute function price_day_texts_dropped();
