-- Spans of whole days for the trends statement (docs/prices/TRENDS.md, "Spans"): a cache, per
-- product and UTC midnight, of the day rows between the statement's edge days, so a year of 11
-- series reads ~70 span rows instead of ~1 000 block and day rows.
--
-- The statement asked at any instant of a UTC day d1 reads the same whole days: its ranges'
-- bands and periods end at d1, and its edge days (whose raw rows it reads: the ranges' start
-- days, the periods' days) are d1 minus a fixed number of days. Between two consecutive edge
-- days, and before the oldest, the days are read whole and summed: a span is such a run of days,
-- [d1 - (e_next - 1) days, d1 - e days) for consecutive edges e < e_next, and [-infinity, d1 -
-- e_oldest days). Its rows, one per series and currency, hold what a block of the same days
-- would (migrations/0022: the same columns, the carries inside it by the currency holding them,
-- the carry into it on the row of the currency that opens it), and the series' oldest day row
-- when built (first_day).
--
-- Only a cache, as the blocks are: the statement reads a product's spans of its d1 instead of its
-- blocks when it has them and every series' oldest day row is still the one they were built
-- from (retention detaching a month leaves spans holding its days; a month can only go oldest
-- first, so the oldest day row moves), and reads the blocks and day rows otherwise; a span
-- holding one of the statement's edge days is never read. Spans are built for every series of a
-- product at once (price_spans_build, by the background task `price-spans` for today's and
-- tomorrow's midnight, and the tests), only from days that have ended; any change of a day row
-- before today deletes its product's spans (the blocks' trigger function, below), so "the
-- product has spans for d1" means they are those of its day rows now.
--
-- Not partitioned: a span reaches over months, and only the spans of today's and tomorrow's
-- midnight are kept (a build deletes its products' older ones).

-- A block row's columns (migrations/0022), the midnight, the series' oldest day row, and what
-- finds price_since's and cheaper_until's day in the span without its day rows: the price of
-- its closing run of days all at one price (run_price: the last day's, when its min is its max)
-- and the latest day before that run (pre_run_day); the record lows, latest first (low_days,
-- low_mins: each day whose priced_min is below every later day's of the span).
create table price_spans (
  like price_blocks,
  d1          timestamptz not null,
  first_day   timestamptz not null,
  run_price   numeric(19, 4),
  pre_run_day timestamptz,
  low_days    timestamptz[],
  low_mins    numeric[],
  primary key (product_id, d1, block, series, currency),
  foreign key (account_id) references accounts (id) on delete cascade,
  foreign key (product_id) references products (id) on delete cascade,
  foreign key (competitor_id) references competitors (id) on delete cascade
);
create index price_spans_competitor on price_spans (competitor_id) where competitor_id is not null;
create index price_spans_account on price_spans (account_id);
-- Retention's probe for spans holding days it removed (src/prices/partitions: deleteSpansBefore).
create index price_spans_first_day on price_spans (first_day);

-- Builds the spans of the given products for the UTC midnight `p_d1` and the edge days `p_edges`
-- (days before p_d1) from their day rows; returns how many span rows it wrote. Only spans that
-- ended by this transaction's UTC midnight are built. Idempotent: a product that has spans for
-- p_d1 is left as it is. Deletes the products' spans of midnights before p_d1's previous one.
create function price_spans_build(p_products text[], p_d1 timestamptz, p_edges integer[])
returns integer
language plpgsql as $$
declare
  n integer;
  v_todo text[];
begin
  select array_agg(p order by p) into v_todo from unnest(p_products) p
   where not exists (select 1 from price_spans s where s.product_id = p and s.d1 = p_d1);
  if v_todo is null then
    return 0;
  end if;
  -- No writer of the products' day rows between the insert's snapshot and the commit (the
  -- blocks' build takes the same locks in the same order: migrations/0022).
  perform 1 from price_series s where s.product_id = any (v_todo)
    order by s.product_id, s.competitor_id for share;
  perform 1 from products p where p.id = any (v_todo) order by p.id for update;
  delete from price_spans s where s.product_id = any (v_todo) and s.d1 < p_d1 - interval '24 hours';
  with sp as (
    -- The runs of days between consecutive edge days, and before the oldest one.
    select case when s.hi_e is null then '-infinity'::timestamptz
                else p_d1 - make_interval(hours => 24 * (s.hi_e - 1)) end as lo,
           p_d1 - make_interval(hours => 24 * coalesce(s.lo_e, 0)) as hi
      from (select lag(e) over (order by e) as lo_e, e as hi_e from unnest(p_edges) e
            union all
            select max(e), null from unnest(p_edges) e) s
     where s.hi_e is null or s.hi_e - coalesce(s.lo_e, 0) > 1
  ),
  x0 as materialized (
    select d.account_id, d.product_id, d.competitor_id, d.series, d.currency, d.day,
           min(d.day) over (partition by d.product_id, d.series) as first_day,
           d.priced_us, d.priced_sum, d.priced_n, d.priced_means, d.low, d.low_at, d.high, d.high_at, d.count,
           d.oos_us, d.known_us, d.open_at, d.min, d.max, d.priced_min, d.prev_day, d.prev_currency,
           d.prev_in_stock, d.prev_mean
      from price_days d
     where d.product_id = any (v_todo) and d.day < p_d1
  ),
  -- The day rows in the spans that have ended.
  x1 as (
    select x0.*, sp.lo as block, sp.hi as block_end,
           (round(date_part('epoch', x0.open_at) * 1000)::bigint * 1000)
             - (round(date_part('epoch', x0.prev_day + interval '24 hours') * 1000)::bigint * 1000) as k_dur
      from x0 join sp on x0.day >= sp.lo and x0.day < sp.hi
     where sp.hi <= date_trunc('day', now(), 'UTC')
  ),
  -- Per row, latest day first within its span and currency: the last day's price when its min is
  -- its max, and the lowest priced_min of the later days.
  x as (
    select x1.*,
           first_value(case when x1.min = x1.max then x1.min end) over w as run_price,
           min(x1.priced_min) over (w rows between unbounded preceding and 1 preceding) as later_min
      from x1
    window w as (partition by x1.product_id, x1.series, x1.currency, x1.block order by x1.day desc)
  ),
  -- The carries inside a span (from a day row that is still there: retention may have left a
  -- carry pointing into a month it detached), by the currency of the observation holding them.
  k as (
    select x.product_id, x.series, x.block, x.prev_currency as currency,
           sum(x.k_dur) filter (where x.prev_in_stock is not false) as k_us,
           sum(x.prev_mean * x.k_dur) filter (where x.prev_in_stock is not false) as k_sum,
           sum(x.k_dur) filter (where x.prev_in_stock = false) as k_oos,
           sum(x.k_dur) filter (where x.prev_in_stock is not null) as k_known
      from x
     where x.prev_day >= x.block and x.prev_day >= x.first_day
     group by 1, 2, 3, 4
  )
  insert into price_spans (account_id, product_id, competitor_id, series, currency, d1, first_day, block, block_end,
                           last_day, priced_us, priced_sum, priced_n, priced_means, lo, hi, count, oos_us, known_us,
                           open_at, min, max, priced_min, prev_day, prev_currency, prev_in_stock, prev_mean,
                           k_us, k_sum, k_oos, k_known, run_price, pre_run_day, low_days, low_mins)
  select g.account_id, g.product_id, g.competitor_id, g.series, g.currency, p_d1, g.first_day, g.block, g.block_end,
         g.last_day, g.priced_us, g.priced_sum, g.priced_n, g.priced_means, g.lo, g.hi, g.count, g.oos_us, g.known_us,
         g.open_at, g.min, g.max, g.priced_min, g.prev_day, g.prev_currency, g.prev_in_stock, g.prev_mean,
         k.k_us, k.k_sum, k.k_oos, k.k_known, g.run_price, g.pre_run_day, g.low_days, g.low_mins
    from (
      select min(x.account_id) as account_id, x.product_id, min(x.competitor_id) as competitor_id, x.series, x.currency,
             min(x.first_day) as first_day, x.block, min(x.block_end) as block_end, max(x.day) as last_day,
             sum(x.priced_us) as priced_us, sum(x.priced_sum) as priced_sum, sum(x.priced_n) as priced_n,
             sum(x.priced_means) as priced_means,
             min(array[x.low::float8, -date_part('epoch', x.low_at)]) filter (where x.low is not null) as lo,
             max(array[x.high::float8, date_part('epoch', x.high_at)]) filter (where x.high is not null) as hi,
             sum(x.count) as count, sum(x.oos_us) as oos_us, sum(x.known_us) as known_us, min(x.open_at) as open_at,
             min(x.min) as min, max(x.max) as max, min(x.priced_min) as priced_min,
             -- The carry into the span: on the first day's opening row, the only one of the
             -- series' rows in the span whose previous day lies before it.
             max(x.prev_day) filter (where x.prev_day < x.block) as prev_day,
             min(x.prev_currency) filter (where x.prev_day < x.block) as prev_currency,
             bool_or(x.prev_in_stock) filter (where x.prev_day < x.block) as prev_in_stock,
             min(x.prev_mean) filter (where x.prev_day < x.block) as prev_mean,
             min(x.run_price) as run_price,
             max(x.day) filter (where x.min <> x.max or x.min is distinct from x.run_price) as pre_run_day,
             array_agg(x.day order by x.day desc)
               filter (where x.priced_min < x.later_min or (x.priced_min is not null and x.later_min is null)) as low_days,
             array_agg(x.priced_min order by x.day desc)
               filter (where x.priced_min < x.later_min or (x.priced_min is not null and x.later_min is null)) as low_mins
        from x
       group by x.product_id, x.series, x.currency, x.block
    ) g
    left join k on k.product_id = g.product_id and k.series = g.series and k.block = g.block and k.currency = g.currency
   order by g.product_id, g.block, g.series, g.currency;
  get diagnostics n = row_count;
  return n;
end
$$;

-- Any change of a day row before today drops, besides the blocks of its product and block
-- (migrations/0022), every span of its product and midnight when it lies in one of them or on or
-- before a series' oldest day row they were built from, in the same statement: a product has all
-- the spans of a midnight or none (a change on an edge day, in no span, leaves them). In-order
-- ingestion into today's rows stops at the first query, as before.
create or replace function price_blocks_dropped() returns trigger language plpgsql as $$
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
  delete from price_spans s
   where s.product_id = any (array(select distinct c.product_id from changed c where c.day >= v_lo and c.day <= v_hi))
     and (s.product_id, s.d1) in (
       select x.product_id, x.d1 from price_spans x join changed c on c.product_id = x.product_id
        where c.day >= v_lo and c.day <= v_hi and ((c.day >= x.block and c.day < x.block_end) or c.day <= x.first_day));
  return null;
end
$$;
