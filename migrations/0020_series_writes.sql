-- Ingestion's price_series writes, cheaper per statement (docs/RELIABILITY.md, "The breakdown
-- again"; docs/POSITIONS.md, "How it is kept"). What is stored stays exactly what it was.
--
-- 1. ph_refresh_positions returns at once when it has no product. Every statement that writes
--    price_series fires the positions triggers of 0012 (lockSeries' upsert fires both the insert
--    and the update one), most of them with no product whose inputs changed; each such call ran
--    its lock and upsert statements over an empty array.
-- 2. price_observations_track updates each series once instead of three times (its counter of
--    changes, its latest, a late observation's first_observed_at): one statement and one firing
--    of the update triggers instead of three. `l` is the row being updated, as the statement's
--    snapshot sees it: the series are locked above, before this statement took its snapshot, so
--    no other writer changes them in between. A series is written when its latest moves, when
--    it got changes (only after a newer latest), or when a late observation is its earliest; a
--    row whose latest does not move keeps its latest_* and updated_at, as before.

create or replace function ph_refresh_positions(ids text[]) returns void language plpgsql volatile as $$
begin
  if coalesce(cardinality(ids), 0) = 0 then
    return;
  end if;
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

create or replace function price_observations_track() returns trigger language plpgsql as $$
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

  -- Changes: walk each series' rows newer than its latest, in time order, after that latest;
  -- each numbered after the series' last change.
  with recorded as (
    insert into price_changes (account_id, product_id, competitor_id, listing_id, observation_id,
                               old_price, old_currency, old_in_stock, old_observed_at,
                               new_price, new_currency, new_in_stock, observed_at, source, sequence)
    select c.account_id, c.product_id, c.competitor_id, c.listing_id, c.id,
           c.prev_price, c.prev_currency, c.prev_in_stock, c.prev_observed_at,
           c.price, c.currency, c.in_stock, c.observed_at, c.source,
           c.changes + row_number() over (partition by c.product_id, c.competitor_id order by c.observed_at, c.id)
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
                   s.latest_source as source, true as is_latest, s.changes
              from price_series s
              join (select distinct product_id, competitor_id from new_rows) k
                on k.product_id = s.product_id and k.competitor_id is not distinct from s.competitor_id
             where s.latest_observed_at is not null
            union all
            select n.account_id, n.product_id, n.competitor_id, n.listing_id, n.id, n.price, n.currency,
                   n.in_stock, n.observed_at, n.source, false, s.changes
              from new_rows n
              join price_series s
                on s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id
             where s.latest_observed_at is null
                or (n.observed_at, n.id) > (s.latest_observed_at, s.latest_observation_id)
          ) w
        window s as (partition by product_id, competitor_id order by observed_at, id)
      ) c
     where not c.is_latest
       and c.prev_observed_at is not null
       and (c.price <> c.prev_price or c.currency <> c.prev_currency or c.in_stock is distinct from c.prev_in_stock)
    returning product_id, competitor_id
  )
  update price_series s set
         changes = s.changes + coalesce(n.recorded, 0),
         latest_price = case when n.newer then n.price else s.latest_price end,
         latest_currency = case when n.newer then n.currency else s.latest_currency end,
         latest_in_stock = case when n.newer then n.in_stock else s.latest_in_stock end,
         latest_observed_at = case when n.newer then n.observed_at else s.latest_observed_at end,
         latest_listing_id = case when n.newer then n.listing_id else s.latest_listing_id end,
         latest_source = case when n.newer then n.source else s.latest_source end,
         latest_observation_id = case when n.newer then n.id else s.latest_observation_id end,
         first_observed_at = least(s.first_observed_at, n.first_observed_at),
         updated_at = case when n.newer then now() else s.updated_at end
    from (
      select n.*, l.latest_observed_at is null or (n.observed_at, n.id) > (l.latest_observed_at, l.latest_observation_id) as newer,
             r.count as recorded
        from (
          select distinct on (product_id, competitor_id)
                 product_id, competitor_id, price, currency, in_stock, observed_at, listing_id, source, id,
                 min(observed_at) over (partition by product_id, competitor_id) as first_observed_at
            from new_rows
           order by product_id, competitor_id, observed_at desc, id desc
        ) n
        join price_series l on l.product_id = n.product_id and l.competitor_id is not distinct from n.competitor_id
        left join (select product_id, competitor_id, count(*) as count from recorded group by product_id, competitor_id) r
          on r.product_id = n.product_id and r.competitor_id is not distinct from n.competitor_id
    ) n
   where s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id
     and (n.newer or n.recorded is not null or n.first_observed_at < s.first_observed_at);
  return null;
end
$$;
