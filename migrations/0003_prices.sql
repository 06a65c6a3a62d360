-- Prices: the series each observation belongs to, the latest price of each series, the price
-- changes the alerts and webhooks consume, exchange rates per account, and the columns the
-- retention roll-up needs. See docs/PRICES.md.
--
-- A series is one seller's price of one product: (product_id, competitor_id), where a NULL
-- competitor_id is our own shop. Observations from any listing of that competitor for that
-- product, and those sent through POST /prices, belong to the same series.

-- A rolled-up observation stands for `samples` raw observations whose prices added up to
-- `price_sum` (NULL: price * samples, which is every raw observation). Counts and averages are
-- sum(samples) and sum(coalesce(price_sum, price * samples)) / sum(samples), so rolling up
-- keeps them exact.
alter table price_observations add column samples integer not null default 1 check (samples >= 1);
alter table price_observations add column price_sum numeric(28, 4);
create index price_observations_series_time on price_observations (product_id, competitor_id, observed_at);
drop index price_observations_product_time;

-- The latest observation of each series (by observed_at; an observation arriving late, older
-- than the latest, goes into the history only). Kept by the trigger below for every insert
-- into price_observations, whatever the path (a check, POST /prices).
create table price_series (
  account_id            text not null references accounts (id) on delete cascade,
  product_id            text not null references products (id) on delete cascade,
  competitor_id         text references competitors (id) on delete cascade,
  latest_price          numeric(19, 4),
  latest_currency       text,
  latest_in_stock       boolean,
  latest_observed_at    timestamptz(3),
  latest_listing_id     text,
  latest_source         text,
  latest_observation_id bigint,
  first_observed_at     timestamptz(3),
  updated_at            timestamptz(3) not null default now(),
  constraint price_series_key unique nulls not distinct (product_id, competitor_id)
);
create index price_series_account on price_series (account_id, product_id);
create index price_series_competitor on price_series (competitor_id) where competitor_id is not null;

-- A series' new latest observation that differs from the one before it in price, currency or
-- stock. The first observation of a series is not a change.
create table price_changes (
  id                    bigint generated always as identity primary key,
  account_id            text not null references accounts (id) on delete cascade,
  product_id            text not null references products (id) on delete cascade,
  competitor_id         text references competitors (id) on delete cascade,
  listing_id            text,
  observation_id        bigint not null,
  old_price             numeric(19, 4) not null,
  old_currency          text not null,
  old_in_stock          boolean,
  old_observed_at       timestamptz(3) not null,
  new_price             numeric(19, 4) not null,
  new_currency          text not null,
  new_in_stock          boolean,
  observed_at           timestamptz(3) not null,
  source                text not null,
  created_at            timestamptz(3) not null default now()
);
create index price_changes_account on price_changes (account_id, id);
create index price_changes_product on price_changes (product_id, observed_at);

-- 1 base = rate quote, set by the account. Comparisons across currencies use only these.
create table exchange_rates (
  account_id  text not null references accounts (id) on delete cascade,
  base        text not null check (base ~ '^[A-Z]{3}$'),
  quote       text not null check (quote ~ '^[A-Z]{3}$' and quote <> base),
  rate        numeric(30, 12) not null check (rate > 0),
  created_at  timestamptz(3) not null default now(),
  updated_at  timestamptz(3) not null default now(),
  primary key (account_id, base, quote)
);

-- Series of the observations recorded before this migration.
insert into price_series (account_id, product_id, competitor_id, latest_price, latest_currency, latest_in_stock,
                          latest_observed_at, latest_listing_id, latest_source, latest_observation_id, first_observed_at)
select distinct on (product_id, competitor_id)
       account_id, product_id, competitor_id, price, currency, in_stock, observed_at, listing_id, source, id,
       min(observed_at) over (partition by product_id, competitor_id)
  from price_observations
 order by product_id, competitor_id, observed_at desc, id desc;

-- Keeps price_series and price_changes for every statement that inserts observations, in the
-- same transaction (so a change is never recorded for an observation that was rolled back, nor
-- missed for one that was kept). Set-based: one pass per statement, however many rows.
create function price_observations_track() returns trigger language plpgsql as $$
begin
  insert into price_series (account_id, product_id, competitor_id)
  select distinct account_id, product_id, competitor_id from new_rows
   order by product_id, competitor_id
  on conflict (product_id, competitor_id) do nothing;

  -- Lock the statement's series in one order, so concurrent writers to the same series take
  -- turns (each sees the other's latest) and two batches never deadlock.
  perform 1
     from price_series s
     join (select distinct product_id, competitor_id from new_rows) k
       on k.product_id = s.product_id and k.competitor_id is not distinct from s.competitor_id
    order by s.product_id, s.competitor_id
      for update of s;

  -- Changes: walk each series' rows newer than its latest, in time order, after that latest.
  insert into price_changes (account_id, product_id, competitor_id, listing_id, observation_id,
                             old_price, old_currency, old_in_stock, old_observed_at,
                             new_price, new_currency, new_in_stock, observed_at, source)
  select account_id, product_id, competitor_id, listing_id, id,
         prev_price, prev_currency, prev_in_stock, prev_observed_at,
         price, currency, in_stock, observed_at, source
    from (
      select w.*,
             lag(price) over s as prev_price,
             lag(currency) over s as prev_currency,
             lag(in_stock) over s as prev_in_stock,
             lag(observed_at) over s as prev_observed_at,
             lag(is_latest) over s as prev_is_latest
        from (
          select s.account_id, s.product_id, s.competitor_id, s.latest_listing_id as listing_id,
                 s.latest_observation_id as id, s.latest_price as price, s.latest_currency as currency,
                 s.latest_in_stock as in_stock, s.latest_observed_at as observed_at,
                 s.latest_source as source, true as is_latest
            from price_series s
            join (select distinct product_id, competitor_id from new_rows) k
              on k.product_id = s.product_id and k.competitor_id is not distinct from s.competitor_id
           where s.latest_observed_at is not null
          union all
          select n.account_id, n.product_id, n.competitor_id, n.listing_id, n.id, n.price, n.currency,
                 n.in_stock, n.observed_at, n.source, false
            from new_rows n
            join price_series s
              on s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id
           where s.latest_observed_at is null
              or (n.observed_at, n.id) > (s.latest_observed_at, s.latest_observation_id)
        ) w
      window s as (partition by product_id, competitor_id order by observed_at, id)
    ) c
   where not is_latest
     and prev_observed_at is not null
     and (price <> prev_price or currency <> prev_currency or in_stock is distinct from prev_in_stock);

  update price_series s set
         latest_price = n.price,
         latest_currency = n.currency,
         latest_in_stock = n.in_stock,
         latest_observed_at = n.observed_at,
         latest_listing_id = n.listing_id,
         latest_source = n.source,
         latest_observation_id = n.id,
         first_observed_at = least(s.first_observed_at, n.first_observed_at),
         updated_at = now()
    from (
      select distinct on (product_id, competitor_id)
             product_id, competitor_id, price, currency, in_stock, observed_at, listing_id, source, id,
             min(observed_at) over (partition by product_id, competitor_id) as first_observed_at
        from new_rows
       order by product_id, competitor_id, observed_at desc, id desc
    ) n
   where s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id
     and (s.latest_observed_at is null or (n.observed_at, n.id) > (s.latest_observed_at, s.latest_observation_id));

  -- A late observation can still be the series' earliest.
  update price_series s set first_observed_at = n.first_observed_at
    from (select product_id, competitor_id, min(observed_at) as first_observed_at from new_rows
           group by product_id, competitor_id) n
   where s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id
     and n.first_observed_at < s.first_observed_at;
  return null;
end
$$;

create trigger price_observations_track
  after insert on price_observations
  referencing new table as new_rows
  for each statement execute function price_observations_track();
