-- price_observations partitioned by month of observed_at (docs/PRICES.md, "Partitions").
--
-- Why observed_at: every read of observations (history, trends, alerts' lows, the roll-up)
-- bounds observed_at, and retention is "observations older than N days" by observed_at, so
-- both prune on it. A late observation (observed long ago, recorded now) goes into the month it
-- was observed in, where the history looks for it.
--
-- Monthly ranges in UTC, named price_observations_pYYYYMM, plus a default partition that takes
-- whatever no monthly partition covers (a far-away observed_at never fails). The background
-- task 'observation-partitions' (src/prices/partitions) keeps months created ahead.
--
-- The move runs in the migration's one transaction (src/db/migrate.ts): a process killed in the
-- middle leaves the table as it was and the next start does the whole move again.
--
-- What changes for the queries: the primary key is (id, observed_at) (a key of a partitioned
-- table must hold the partition key); ids still come from one sequence, in insert order, and
-- nothing references price_observations by a foreign key (price_series.latest_observation_id
-- and price_changes.observation_id are plain columns), so uniqueness and order by id are what
-- they were.

alter table price_observations rename to price_observations_unpartitioned;
alter index price_observations_pkey rename to price_observations_unpartitioned_pkey;
alter index price_observations_listing_time rename to price_observations_unpartitioned_listing_time;
alter index price_observations_series_time rename to price_observations_unpartitioned_series_time;

create sequence price_observation_ids as bigint;

-- The constraints keep the names they had.
create table price_observations (
  id             bigint not null default nextval('price_observation_ids'),
  account_id     text not null constraint price_observations_account_id_fkey references accounts (id) on delete cascade,
  product_id     text not null constraint price_observations_product_id_fkey references products (id) on delete cascade,
  competitor_id  text constraint price_observations_competitor_id_fkey references competitors (id) on delete cascade,
  listing_id     text constraint price_observations_listing_id_fkey references listings (id) on delete set null,
  price          numeric(19, 4) not null constraint price_observations_price_check check (price >= 0),
  currency       text not null constraint price_observations_currency_check check (currency ~ '^[A-Z]{3}$'),
  in_stock       boolean,
  observed_at    timestamptz(3) not null,
  source         text not null constraint price_observations_source_check check (source in ('scrape', 'api')),
  created_at     timestamptz(3) not null default now(),
  samples        integer not null default 1 constraint price_observations_samples_check check (samples >= 1),
  price_sum      numeric(28, 4),
  constraint price_observations_pkey primary key (id, observed_at)
) partition by range (observed_at);
alter sequence price_observation_ids owned by price_observations.id;

create table price_observations_default partition of price_observations default;

-- A month for every month holding observations (within ten years back and one ahead; rows
-- outside stay in the default partition) and for the current month and the next three.
do $$
declare
  m timestamptz;
begin
  for m in
    select distinct date_trunc('month', observed_at, 'UTC') from price_observations_unpartitioned
     where observed_at >= now() - interval '10 years' and observed_at < now() + interval '1 year'
    union
    select date_trunc('month', now(), 'UTC') + make_interval(months => g) from generate_series(0, 3) g
    order by 1
  loop
    execute format('create table %I partition of price_observations for values from (%L) to (%L)',
                   'price_observations_p' || to_char(m at time zone 'UTC', 'YYYYMM'),
                   to_char(m at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   to_char((m at time zone 'UTC') + interval '1 month', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
  end loop;
end
$$;

-- The rows, before any trigger exists on the new table: they are history already tracked in
-- price_series and price_changes, not new observations.
insert into price_observations (id, account_id, product_id, competitor_id, listing_id, price, currency, in_stock,
                                observed_at, source, created_at, samples, price_sum)
select id, account_id, product_id, competitor_id, listing_id, price, currency, in_stock,
       observed_at, source, created_at, samples, price_sum
  from price_observations_unpartitioned;

-- New ids continue after every id the old identity handed out (rolled-up rows included).
do $$
declare
  last bigint;
begin
  execute format('select last_value from %s', pg_get_serial_sequence('price_observations_unpartitioned', 'id')) into last;
  perform setval('price_observation_ids',
                 greatest(coalesce((select max(id) from price_observations_unpartitioned), 0), coalesce(last, 0), 1));
end
$$;

create index price_observations_series_time on price_observations (product_id, competitor_id, observed_at);
create index price_observations_listing_time on price_observations (listing_id, observed_at);

-- The triggers of the old table, on the new one (price_observations_track, and any a later
-- feature added before this migration ran).
do $$
declare
  t record;
begin
  for t in
    select tg.tgname, pg_get_triggerdef(tg.oid) as def from pg_trigger tg
     where tg.tgrelid = 'price_observations_unpartitioned'::regclass and not tg.tgisinternal
  loop
    execute format('drop trigger %I on price_observations_unpartitioned', t.tgname);
    execute regexp_replace(t.def, ' ON ((\S+\.)?)price_observations_unpartitioned ', ' ON \1price_observations ');
  end loop;
end
$$;

drop table price_observations_unpartitioned;
