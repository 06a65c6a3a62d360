-- Events (an outbox written in the same transaction as the change that causes them), alert
-- rules and what they fire, webhook endpoints and their deliveries. See docs/EVENTS.md,
-- docs/ALERTS.md and docs/WEBHOOKS.md.

-- An id as src/ids.ts makes them (`prefix_` + 10 characters of millisecond time + 16 random,
-- Crockford base32), for rows that SQL creates by itself (a trigger's deliveries). Not a secret:
-- random() is enough to keep them apart.
create function ph_new_id(prefix text) returns text language plpgsql volatile as $$
declare
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  t bigint := floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
  s text := '';
begin
  for i in 1..10 loop
    s := substr(alphabet, (t % 32)::int + 1, 1) || s;
    t := t / 32;
  end loop;
  for i in 1..16 loop
    s := s || substr(alphabet, floor(random() * 32)::int + 1, 1);
  end loop;
  return prefix || '_' || s;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Price series: every change gets the series' next sequence number (1, 2, 3 ...), so a consumer
-- of price.changed / stock.changed events can tell a gap or a reordering.
alter table price_series add column changes bigint not null default 0;
alter table price_changes add column sequence bigint;

update price_changes c set sequence = n.seq
  from (select id, row_number() over (partition by product_id, competitor_id order by observed_at, id) as seq
          from price_changes) n
 where n.id = c.id;
update price_series s set changes = n.count
  from (select product_id, competitor_id, count(*) as count from price_changes group by product_id, competitor_id) n
 where s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id;
alter table price_changes alter column sequence set not null;
create index price_changes_observation on price_changes (observation_id);

-- The trigger of 0003, numbering the changes it records.
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
  update price_series s set changes = s.changes + n.count
    from (select product_id, competitor_id, count(*) as count from recorded group by product_id, competitor_id) n
   where s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id;

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

-- ---------------------------------------------------------------------------------------------
-- Events: what happened in an account, written by the same transaction as the change (outbox).
-- `seq` orders them as they were written (deliveries go out in that order per endpoint); it is
-- never shown, so it says nothing about other accounts.
create table events (
  seq         bigint generated always as identity primary key,
  id          text not null unique,
  account_id  text not null references accounts (id) on delete cascade,
  type        text not null,
  data        jsonb not null,
  created_at  timestamptz(3) not null default now()
);
create index events_account_created on events (account_id, created_at, id);
create index events_account_type_created on events (account_id, type, created_at, id);
create index events_created on events (created_at);

-- ---------------------------------------------------------------------------------------------
-- Alert rules (docs/ALERTS.md). `condition` is the rule's condition object as the API takes it;
-- `condition_type` repeats its type for filters.
create table alerts (
  id                  text primary key,
  account_id          text not null references accounts (id) on delete cascade,
  name                text not null,
  product_id          text references products (id) on delete cascade,
  competitor_id       text references competitors (id) on delete cascade,
  listing_id          text references listings (id) on delete cascade,
  condition           jsonb not null,
  condition_type      text not null,
  rearm               text not null default 'on_clear' check (rearm in ('on_clear', 'cooldown', 'every_change')),
  hysteresis_percent  numeric(9, 4) not null default 0 check (hysteresis_percent >= 0),
  cooldown_seconds    integer not null default 0 check (cooldown_seconds >= 0),
  confirmations       integer not null default 1 check (confirmations >= 1),
  daily_cap           integer check (daily_cap >= 1),
  enabled             boolean not null default true,
  created_at          timestamptz(3) not null default now(),
  updated_at          timestamptz(3) not null default now()
);
create index alerts_account_created on alerts (account_id, created_at, id);
create index alerts_account_enabled on alerts (account_id, condition_type) where enabled;

-- What a rule remembers about one subject it watches (a price series, a product, a listing)
-- between observations: how many in a row held, whether it may fire, when it last fired, and
-- its firings on the current UTC day.
create table alert_states (
  alert_id       text not null references alerts (id) on delete cascade,
  subject        text not null,
  streak         integer not null default 0,
  armed          boolean not null default true,
  last_fired_at  timestamptz(3),
  cap_day        date,
  cap_count      integer not null default 0,
  last_value     numeric,
  updated_at     timestamptz(3) not null default now(),
  primary key (alert_id, subject)
);

create table alert_events (
  id               text primary key,
  account_id       text not null references accounts (id) on delete cascade,
  alert_id         text not null references alerts (id) on delete cascade,
  condition_type   text not null,
  product_id       text references products (id) on delete cascade,
  competitor_id    text references competitors (id) on delete cascade,
  listing_id       text references listings (id) on delete set null,
  previous         jsonb,
  current          jsonb,
  message          text not null,
  test             boolean not null default false,
  sequence         bigint,
  acknowledged_at  timestamptz(3),
  created_at       timestamptz(3) not null default now()
);
create index alert_events_account_created on alert_events (account_id, created_at, id);
create index alert_events_alert_created on alert_events (alert_id, created_at);
create index alert_events_open on alert_events (account_id, created_at, id) where acknowledged_at is null;

-- ---------------------------------------------------------------------------------------------
-- Webhook endpoints (docs/WEBHOOKS.md) and their delivery state: while failing_since is set the
-- endpoint is down and only one probe goes out, not before probe_at; the worker holding it is
-- locked_by until locked_until.
create table webhook_endpoints (
  id                          text primary key,
  account_id                  text not null references accounts (id) on delete cascade,
  url                         text not null,
  description                 text,
  event_types                 text[] not null default '{}',
  format                      text not null default 'standard' check (format in ('standard', 'slack')),
  enabled                     boolean not null default true,
  disabled_reason             text,
  secret                      text not null,
  previous_secret             text,
  previous_secret_expires_at  timestamptz(3),
  failing_since               timestamptz(3),
  last_success_at             timestamptz(3),
  probe_at                    timestamptz(3),
  locked_by                   text,
  locked_until                timestamptz(3),
  created_at                  timestamptz(3) not null default now(),
  updated_at                  timestamptz(3) not null default now()
);
create index webhook_endpoints_account_created on webhook_endpoints (account_id, created_at, id);

-- One row per attempt to deliver an event to an endpoint: `pending` until it is made (then
-- `succeeded` or `failed`; a failure with retries left adds the next attempt, pending).
create table webhook_deliveries (
  id               text primary key,
  account_id       text not null references accounts (id) on delete cascade,
  endpoint_id      text not null references webhook_endpoints (id) on delete cascade,
  event_id         text not null references events (id) on delete cascade,
  event_seq        bigint not null,
  attempt          integer not null check (attempt >= 1),
  trigger          text not null default 'scheduled' check (trigger in ('scheduled', 'manual')),
  status           text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  next_attempt_at  timestamptz(3),
  response_status  integer,
  duration_ms      integer,
  response_body    text,
  error            text,
  attempted_at     timestamptz(3),
  created_at       timestamptz(3) not null default now()
);
create index webhook_deliveries_endpoint_created on webhook_deliveries (endpoint_id, created_at, id);
create index webhook_deliveries_pending on webhook_deliveries (endpoint_id, event_seq, id) where status = 'pending';
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_event on webhook_deliveries (event_id);

-- Every event goes to each enabled endpoint of its account that wants its type, as a pending
-- first attempt, in the transaction that wrote the event; the NOTIFY (sent at commit) wakes the
-- delivery workers. `webhook.test` goes only to the endpoint tested (src/webhooks).
create function events_fan_out() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, attempt, trigger, next_attempt_at)
  select ph_new_id('whdl'), e.account_id, w.id, e.id, e.seq, 1, 'scheduled', now()
    from new_rows e
    join webhook_endpoints w
      on w.account_id = e.account_id and w.enabled
     and (cardinality(w.event_types) = 0 or e.type = any (w.event_types))
   where e.type <> 'webhook.test'
   order by e.seq, w.id;
  if found then
    perform pg_notify('webhook_deliveries', '');
  end if;
  return null;
end
$$;

create trigger events_fan_out
  after insert on events
  referencing new table as new_rows
  for each statement execute function events_fan_out();
