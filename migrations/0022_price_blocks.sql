-- Blocks of whole days for the trends statement (docs/prices/TRENDS.md, "Blocks"): a cache of
-- the day rows (migrations/0017, 0018, 0021), so the statement reads ~1 000 rows for a year of
-- 11 series instead of ~4 400 day rows.
--
-- A block is a fixed piece of a UTC month: days 1-7, 8-14, 15-21 and 22 to the month's end.
-- One row per product, series, currency and block holds what the statement sums of the block's
-- day rows of that currency: the trends' sums (priced_us, priced_sum, priced_n, priced_means,
-- count, oos_us, known_us), the lowest and highest priced pairs as the statement orders them
-- (lo, hi: float8 price and epoch seconds, the instant negated for the lowest), the first
-- observation (open_at), the latest day (last_day), min, max and priced_min (the statement finds
-- price_since's and cheaper_until's day in the one block they point to, from its day rows);
-- the carries inside the block (a day row's carry from the series' previous day row in the same
-- block) summed by the currency of the observation holding them (k_us, k_sum, k_oos, k_known);
-- and the carry into the block kept as the first day row's (prev_day, prev_currency,
-- prev_in_stock, prev_mean, on the row of the currency that opens the block), which the
-- statement reads as it reads a day row's.
--
-- Only a cache: the statement reads a block's row only when the product has block rows for it
-- and the block lies wholly inside one band of whole days with none of the statement's edge
-- days, and its day rows otherwise, so the answer never depends on whether a block was built.
-- Blocks are built for every series of a product at once (price_blocks_build, by the
-- background task and the tests) and only once they have ended before today's UTC midnight; any
-- change of a day row (an insert, a late observation, a delete, an update, a carry moved, the
-- roll-up's rewrite, a cascade) deletes the rows of its product and block in the same statement
-- (the statement triggers below), so "the product has block rows for this block" means all of
-- them are those of the day rows there now.
--
-- Partitioned by month beside price_days (a block lies in one UTC month): created, filled from
-- the default partition and dropped with them by src/prices/partitions. This migration only
-- makes the schema: the background task fills the blocks (docs/SCALING.md, "Backfills of the
-- roll-ups on a large database"), and the statement reads the day rows meanwhile.

create table price_blocks (
  account_id    text not null references accounts (id) on delete cascade,
  product_id    text not null references products (id) on delete cascade,
  competitor_id text references competitors (id) on delete cascade,
  series        text not null,
  currency      text not null,
  block         timestamptz not null,
  block_end     timestamptz not null,
  last_day      timestamptz not null,
  priced_us     bigint not null,
  priced_sum    numeric not null,
  priced_n      bigint not null,
  priced_means  numeric not null,
  lo            float8[],
  hi            float8[],
  count         bigint not null,
  oos_us        bigint not null,
  known_us      bigint not null,
  open_at       timestamptz(3) not null,
  min           numeric(19, 4) not null,
  max           numeric(19, 4) not null,
  priced_min    numeric(19, 4),
  prev_day      timestamptz,
  prev_currency text,
  prev_in_stock boolean,
  prev_mean     numeric,
  k_us          bigint,
  k_sum         numeric,
  k_oos         bigint,
  k_known       bigint,
  primary key (product_id, block, series, currency)
) partition by range (block);

create table price_blocks_default partition of price_blocks default;
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
    execute format('create table %I partition of price_blocks %s',
                   replace(m.name, 'price_observations_', 'price_blocks_'), m.bound);
  end loop;
end
$$;
create index price_blocks_competitor on price_blocks (competitor_id) where competitor_id is not null;
create index price_blocks_account on price_blocks (account_id);

-- The block of a UTC day (any instant of it): the first of days 1, 8, 15 or 22 of its month.
create function price_block_of(t timestamptz) returns timestamptz language sql immutable parallel safe as $$
  select date_trunc('month', t, 'UTC')
         + make_interval(hours => 168 * least((date_part('day', t at time zone 'UTC')::integer - 1) / 7, 3))
$$;

-- The end of the block starting at `b` (exclusive): a week later, or the next month's first day
-- for the block of day 22 (ten days later is always in the next month).
create function price_block_end(b timestamptz) returns timestamptz language sql immutable parallel safe as $$
  select case when date_part('day', b at time zone 'UTC') < 22 then b + interval '168 hours'
              else date_trunc('month', b + interval '240 hours', 'UTC') end
$$;

-- Builds the missing blocks of the given products that ended by `p_before`'s UTC midnight (and
-- begin no earlier than the block of `p_since`), from their day rows; returns how many block
-- rows it wrote. Idempotent: a block the product already has rows for is left as it is.
create function price_blocks_build(p_products text[], p_before timestamptz, p_since timestamptz default '-infinity')
returns integer
language plpgsql as $$
declare
  n integer;
  v_from timestamptz;
  v_to timestamptz;
begin
  -- Days before the block of `p_before`'s midnight (never later than this transaction's own) lie
  -- in blocks that have ended: the day rows' trigger counts on none being built before.
  v_to := price_block_of(date_trunc('day', least(p_before, now()), 'UTC'));
  v_from := case when p_since = '-infinity' then p_since else price_block_of(p_since) end;
  -- Nothing to build (the usual hourly run): no lock taken. The day rows' blocks first, then one
  -- probe a block (a probe a day row took twice as long).
  perform 1
     from (select distinct d.product_id, price_block_of(d.day) as block from price_days d
            where d.product_id = any (p_products) and d.day >= v_from and d.day < v_to) x
    where not exists (select 1 from price_blocks b where b.product_id = x.product_id and b.block = x.block)
    limit 1;
  if not found then
    return 0;
  end if;
  -- No writer of the products' day rows between the insert's snapshot and the commit: a
  -- block built from older day rows would stay. Writers of observations lock their series
  -- first (FOR UPDATE, src/prices/series-lock.ts), then the product by the foreign key of every
  -- row they insert (FOR KEY SHARE; a new series has no row to lock yet); deletes and updates
  -- lock the series. Taken in the same order, so no cycle: the series, then the products.
  perform 1 from price_series s where s.product_id = any (p_products)
    order by s.product_id, s.competitor_id for share;
  perform 1 from products p where p.id = any (p_products) order by p.id for update;
  with x0 as materialized (
    select d.account_id, d.product_id, d.competitor_id, d.series, d.currency, d.day, price_block_of(d.day) as block,
           d.priced_us, d.priced_sum, d.priced_n, d.priced_means, d.low, d.low_at, d.high, d.high_at, d.count,
           d.oos_us, d.known_us, d.open_at, d.min, d.max, d.priced_min, d.prev_day, d.prev_currency,
           d.prev_in_stock, d.prev_mean
      from price_days d
     where d.product_id = any (p_products) and d.day >= v_from and d.day < v_to
  ),
  -- The day rows of the ended blocks the products have no rows for (a join on plain columns: an
  -- anti join of the blocks on the product alone filtered every pair).
  x as (
    select x0.*, price_block_end(x0.block) as block_end,
           (round(date_part('epoch', x0.open_at) * 1000)::bigint * 1000)
             - (round(date_part('epoch', x0.prev_day + interval '24 hours') * 1000)::bigint * 1000) as k_dur
      from x0
     where not exists (select 1 from price_blocks b where b.product_id = x0.product_id and b.block = x0.block)
  ),
  -- The carries inside a block, by the currency of the observation holding them.
  k as (
    select x.product_id, x.series, x.block, x.prev_currency as currency,
           sum(x.k_dur) filter (where x.prev_in_stock is not false) as k_us,
           sum(x.prev_mean * x.k_dur) filter (where x.prev_in_stock is not false) as k_sum,
           sum(x.k_dur) filter (where x.prev_in_stock = false) as k_oos,
           sum(x.k_dur) filter (where x.prev_in_stock is not null) as k_known
      from x
     where x.prev_day >= x.block and x.block_end <= v_to
     group by 1, 2, 3, 4
  )
  insert into price_blocks (account_id, product_id, competitor_id, series, currency, block, block_end, last_day,
                            priced_us, priced_sum, priced_n, priced_means, lo, hi, count, oos_us, known_us, open_at,
                            min, max, priced_min, prev_day, prev_currency, prev_in_stock, prev_mean,
                            k_us, k_sum, k_oos, k_known)
  select g.*, k.k_us, k.k_sum, k.k_oos, k.k_known
    from (
      select min(x.account_id), x.product_id, min(x.competitor_id), x.series, x.currency, x.block, min(x.block_end),
             max(x.day), sum(x.priced_us), sum(x.priced_sum), sum(x.priced_n), sum(x.priced_means),
             min(array[x.low::float8, -date_part('epoch', x.low_at)]) filter (where x.low is not null),
             max(array[x.high::float8, date_part('epoch', x.high_at)]) filter (where x.high is not null),
             sum(x.count), sum(x.oos_us), sum(x.known_us), min(x.open_at), min(x.min), max(x.max), min(x.priced_min),
             -- The carry into the block: on the first day's opening row, the only one of the
             -- series' rows in the block whose previous day lies before it.
             max(x.prev_day) filter (where x.prev_day < x.block),
             min(x.prev_currency) filter (where x.prev_day < x.block),
             bool_or(x.prev_in_stock) filter (where x.prev_day < x.block),
             min(x.prev_mean) filter (where x.prev_day < x.block)
        from x
       where x.block_end <= v_to
       group by x.product_id, x.series, x.currency, x.block
    ) g (account_id, product_id, competitor_id, series, currency, block, block_end, last_day, priced_us, priced_sum,
         priced_n, priced_means, lo, hi, count, oos_us, known_us, open_at, min, max, priced_min,
         prev_day, prev_currency, prev_in_stock, prev_mean)
    left join k on k.product_id = g.product_id and k.series = g.series and k.block = g.block and k.currency = g.currency
   order by g.product_id, g.block, g.series, g.currency;
  get diagnostics n = row_count;
  return n;
end
$$;

-- Any change of day rows drops the blocks of their product and block, in the same statement.
-- Blocks exist only once ended (price_blocks_build: by its transaction's midnight), and this
-- runs once the writer holds the locks the build takes, so a day row of today or later has none
-- to drop: in-order ingestion into today's rows stops at the first query. The delete names the
-- products and the blocks' range, so it probes the key of their months' partitions only (a join
-- to the changed rows probed every partition: +3.6 ms of CPU per 1 000-row batch, against +1).
create function price_blocks_dropped() returns trigger language plpgsql as $$
declare
  v_lo timestamptz;
  v_hi timestamptz;
begin
  select min(c.day), max(c.day) into v_lo, v_hi from changed c where c.day < date_trunc('day', clock_timestamp(), 'UTC');
  if v_lo is null then
    return null;
  end if;
  delete from price_blocks b
   where b.product_id = any (array(select distinct c.product_id from changed c where c.day >= v_lo and c.day <= v_hi))
     and b.block >= price_block_of(v_lo) and b.block <= v_hi
     and (b.product_id, b.block) in (select c.product_id, price_block_of(c.day) from changed c where c.day >= v_lo and c.day <= v_hi);
  return null;
end
$$;

create trigger price_days_blocks_inserted after insert on price_days
  referencing new table as changed for each statement execute function price_blocks_dropped();
create trigger price_days_blocks_updated after update on price_days
  referencing new table as changed for each statement execute function price_blocks_dropped();
create trigger price_days_blocks_deleted after delete on price_days
  referencing old table as changed for each statement execute function price_blocks_dropped();
