-- Positions (docs/POSITIONS.md): where each product's price stands among its competitors'.
--
-- 1. ph_position(): THE definition of a product's position, moved here from src/position/sql.ts
--    so that the stored rows below and every live read (GET /products/{id} monitoring.position,
--    /products.csv, /products/{id}/trends, through positionSql) run the same SQL. A STABLE SQL
--    function returning a table: the planner inlines it where it is called. The conversion is
--    src/money/convert.ts's rule (rateJoin + convertedSql) written out.
-- 2. product_positions: one row per product holding its position and what lists sort and filter
--    on (gap, undercut), kept by the triggers below in the transaction of every change of an
--    input: price_series (new latest prices, stock, deleted competitors), products (base_price,
--    currency), exchange_rates. GET /positions reads it instead of computing 100 000 positions.
-- 3. Lock order: a trigger refreshes its products' rows in one statement in product id order,
--    after the writer locked its series (src/prices/series-lock.ts): writers of different series
--    of a product take turns on the product's row and never wait for each other in a circle.

create function ph_position(p_id text, p_account text, p_currency text, p_base numeric)
returns table (
  own_observed boolean, own_price numeric, compared int, left_out_of_stock int, left_no_rate int,
  in_stock int, out_of_stock int, stock_unknown int, lowest numeric, average numeric, highest numeric,
  cheapest_id text, cheapest_tied int, rank int, price_index numeric, undercut_ids text[]
)
language sql stable as $$
  select coalesce(bool_or(s.own), false) as own_observed,
         case when coalesce(bool_or(s.own), false) then max(s.conv) filter (where s.own) else p_base end as own_price,
         count(*) filter (where s.cmp)::int as compared,
         count(*) filter (where not s.own and s.in_stock is false)::int as left_out_of_stock,
         count(*) filter (where not s.own and s.in_stock is not false and s.conv is null)::int as left_no_rate,
         count(*) filter (where not s.own and s.in_stock)::int as in_stock,
         count(*) filter (where not s.own and s.in_stock is false)::int as out_of_stock,
         count(*) filter (where not s.own and s.in_stock is null)::int as stock_unknown,
         min(s.conv) filter (where s.cmp) as lowest,
         round(avg(s.conv) filter (where s.cmp), 4) as average,
         max(s.conv) filter (where s.cmp) as highest,
         (array_agg(s.competitor_id order by s.conv, s.competitor_id) filter (where s.cmp))[1] as cheapest_id,
         greatest(count(*) filter (where s.cmp and s.conv = s.lo) - 1, 0)::int as cheapest_tied,
         case when count(*) filter (where s.cmp) > 0 and max(s.me) is not null
              then 1 + count(*) filter (where s.cmp and s.conv < s.me) end::int as rank,
         round(max(s.me) / nullif(avg(s.conv) filter (where s.cmp), 0) * 100, 2) as price_index,
         coalesce(array_agg(s.competitor_id order by s.conv, s.competitor_id) filter (where s.cmp and s.conv < s.me), '{}') as undercut_ids
    from (
      select s.*,
             case when bool_or(s.own) over () then max(s.conv) filter (where s.own) over () else p_base end as me,
             min(s.conv) filter (where s.cmp) over () as lo
        from (
          select s.competitor_id, s.competitor_id is null as own, s.latest_in_stock as in_stock, v.conv,
                 s.competitor_id is not null and s.latest_in_stock is not false and v.conv is not null as cmp
            from price_series s
            left join lateral (
              select x.rate, x.base <> s.latest_currency as inverse
                from exchange_rates x
               where s.latest_currency <> p_currency and x.account_id = p_account
                 and ((x.base = s.latest_currency and x.quote = p_currency) or (x.base = p_currency and x.quote = s.latest_currency))
               order by x.base = s.latest_currency desc
               limit 1
            ) fx on s.latest_currency <> p_currency
            cross join lateral (
              select case when s.latest_currency = p_currency then round(s.latest_price, 4)
                          when fx.inverse then round(s.latest_price / fx.rate, 4)
                          else round(s.latest_price * fx.rate, 4) end as conv
            ) v
           where s.product_id = p_id and s.latest_observed_at is not null
        ) s
    ) s
$$;

-- A product's stored position: ph_position's columns that GET /positions shows, filters and
-- sorts on, and when they last changed. gap_percent is null when the cheapest competitor's
-- price is 0 and ours is not (an infinite gap); lists sort it as Infinity.
create table product_positions (
  product_id    text primary key references products (id) on delete cascade,
  account_id    text not null references accounts (id) on delete cascade,
  currency      text not null,
  own_price     numeric,
  own_observed  boolean not null,
  compared      int not null,
  left_out      int not null,
  lowest        numeric,
  average       numeric,
  highest       numeric,
  cheapest_id   text,
  rank          int,
  price_index   numeric,
  gap_amount    numeric,
  gap_percent   numeric,
  undercut_by   int,
  undercut_ids  text[] not null,
  changed_at    timestamptz(3) not null default now()
);

-- The sorts of GET /positions over the ranked rows of an account (the list shows only those),
-- each with the product id as tiebreak; nulls sort as Infinity.
create index product_positions_gap_percent on product_positions (account_id, (coalesce(gap_percent, 'Infinity'::numeric)), product_id) where rank is not null;
create index product_positions_gap_amount on product_positions (account_id, gap_amount, product_id) where rank is not null;
create index product_positions_rank on product_positions (account_id, rank, product_id) where rank is not null;
create index product_positions_price_index on product_positions (account_id, (coalesce(price_index, 'Infinity'::numeric)), product_id) where rank is not null;
create index product_positions_changed on product_positions (account_id, changed_at, product_id) where rank is not null;
-- competitor_id: the products a competitor undercuts.
create index product_positions_undercut_ids on product_positions using gin (undercut_ids) where rank > 1;

-- Recomputes the stored positions of `ids` (products that no longer exist are skipped), in
-- product id order; a row whose values did not change keeps its changed_at (and is not written).
-- First it locks the rows (product id order), then computes in a statement of its own: a volatile
-- function's statement takes a fresh snapshot, so a writer that waited here for another's commit
-- computes from that writer's prices too. Computing and locking in one statement would keep the
-- snapshot from before the wait, and the last to commit would store a position missing the
-- other's prices (two batches for two competitors of one product, at once, on PostgreSQL).
create function ph_refresh_positions(ids text[]) returns void language plpgsql volatile as $$
begin
  perform 1 from product_positions where product_id = any(ids) order by product_id for update;
  insert into product_positions as pp (product_id, account_id, currency, own_price, own_observed, compared, left_out,
                                       lowest, average, highest, cheapest_id, rank, price_index, gap_amount, gap_percent,
                                       undercut_by, undercut_ids, changed_at)
  select p.id, p.account_id, p.currency, pos.own_price, pos.own_observed, pos.compared, pos.left_out_of_stock + pos.left_no_rate,
         pos.lowest, pos.average, pos.highest, pos.cheapest_id, pos.rank, pos.price_index,
         case when pos.rank is not null then pos.own_price - pos.lowest end,
         case when pos.rank is null then null
              when pos.lowest = 0 then case when pos.own_price = 0 then 0 end
              else round((pos.own_price - pos.lowest) / pos.lowest * 100, 2) end,
         pos.rank - 1,
         pos.undercut_ids,
         now()
    from (select distinct u.id from unnest(ids) as u (id)) u
    join products p on p.id = u.id
   cross join lateral ph_position(p.id, p.account_id, p.currency, p.base_price) pos
   order by p.id
  on conflict (product_id) do update
     set currency = excluded.currency, own_price = excluded.own_price, own_observed = excluded.own_observed,
         compared = excluded.compared, left_out = excluded.left_out, lowest = excluded.lowest, average = excluded.average,
         highest = excluded.highest, cheapest_id = excluded.cheapest_id, rank = excluded.rank,
         price_index = excluded.price_index, gap_amount = excluded.gap_amount, gap_percent = excluded.gap_percent,
         undercut_by = excluded.undercut_by, undercut_ids = excluded.undercut_ids,
         changed_at = greatest(excluded.changed_at, pp.changed_at + interval '1 millisecond')
   where (pp.currency, pp.own_price, pp.own_observed, pp.compared, pp.left_out, pp.lowest, pp.average, pp.highest,
          pp.cheapest_id, pp.rank, pp.price_index, pp.gap_amount, pp.gap_percent, pp.undercut_by, pp.undercut_ids)
         is distinct from
         (excluded.currency, excluded.own_price, excluded.own_observed, excluded.compared, excluded.left_out, excluded.lowest,
          excluded.average, excluded.highest, excluded.cheapest_id, excluded.rank, excluded.price_index, excluded.gap_amount,
          excluded.gap_percent, excluded.undercut_by, excluded.undercut_ids);
end
$$;

-- price_series: a series gets its first latest price, a new one (price, currency or stock), or
-- goes (its competitor or product deleted). Updates that only move counters, first_observed_at
-- or the time of an unchanged latest leave positions alone.
create function product_positions_series_inserted() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions(array(select distinct product_id from new_rows where latest_observed_at is not null));
  return null;
end
$$;
-- EXCEPT, not a join of the two transition tables: they carry no statistics, so a join is planned
-- as a nested loop (1000 x 1000 rows for a batch of 1000); a set operation is one hash pass.
create function product_positions_series_updated() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions(array(
    select distinct c.product_id from (
      select product_id, competitor_id, latest_price, latest_currency, latest_in_stock, latest_observed_at is null from new_rows
      except
      select product_id, competitor_id, latest_price, latest_currency, latest_in_stock, latest_observed_at is null from old_rows
    ) c));
  return null;
end
$$;
create function product_positions_series_deleted() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions(array(select distinct product_id from old_rows where latest_observed_at is not null));
  return null;
end
$$;
create trigger product_positions_series_inserted after insert on price_series
  referencing new table as new_rows for each statement execute function product_positions_series_inserted();
create trigger product_positions_series_updated after update on price_series
  referencing old table as old_rows new table as new_rows for each statement execute function product_positions_series_updated();
create trigger product_positions_series_deleted after delete on price_series
  referencing old table as old_rows for each statement execute function product_positions_series_deleted();

-- products: a new product has its row at once (alone: nothing to compare); base_price and
-- currency are inputs.
create function product_positions_products_inserted() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions(array(select id from new_rows));
  return null;
end
$$;
create function product_positions_products_updated() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions(array(
    select id from (select id, base_price, currency from new_rows except select id, base_price, currency from old_rows) c));
  return null;
end
$$;
create trigger product_positions_products_inserted after insert on products
  referencing new table as new_rows for each statement execute function product_positions_products_inserted();
create trigger product_positions_products_updated after update on products
  referencing old table as old_rows new table as new_rows for each statement execute function product_positions_products_updated();

-- exchange_rates: a pair's rate converts between its two currencies only (never through a third),
-- so the products it can move are those in one of them with a latest price in the other.
create function ph_refresh_positions_for_rates(pairs jsonb) returns void language sql volatile as $$
  select ph_refresh_positions(array(
    select distinct p.id
      from jsonb_to_recordset(pairs) as r (account_id text, base text, quote text)
      join products p on p.account_id = r.account_id and p.currency in (r.base, r.quote)
     where exists (select 1 from price_series s
                    where s.account_id = p.account_id and s.product_id = p.id and s.latest_observed_at is not null
                      and s.latest_currency in (r.base, r.quote) and s.latest_currency <> p.currency)))
$$;
create function product_positions_rates_inserted() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions_for_rates((select coalesce(jsonb_agg(jsonb_build_object('account_id', account_id, 'base', base, 'quote', quote)), '[]') from new_rows));
  return null;
end
$$;
create function product_positions_rates_updated() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions_for_rates((
    select coalesce(jsonb_agg(jsonb_build_object('account_id', c.account_id, 'base', c.base, 'quote', c.quote)), '[]')
      from (select account_id, base, quote, rate from new_rows except select account_id, base, quote, rate from old_rows) c));
  return null;
end
$$;
create function product_positions_rates_deleted() returns trigger language plpgsql as $$
begin
  perform ph_refresh_positions_for_rates((select coalesce(jsonb_agg(jsonb_build_object('account_id', account_id, 'base', base, 'quote', quote)), '[]') from old_rows));
  return null;
end
$$;
create trigger product_positions_rates_inserted after insert on exchange_rates
  referencing new table as new_rows for each statement execute function product_positions_rates_inserted();
create trigger product_positions_rates_updated after update on exchange_rates
  referencing old table as old_rows new table as new_rows for each statement execute function product_positions_rates_updated();
create trigger product_positions_rates_deleted after delete on exchange_rates
  referencing old table as old_rows for each statement execute function product_positions_rates_deleted();

-- Every product as it stands now.
select ph_refresh_positions(array(select id from products));
