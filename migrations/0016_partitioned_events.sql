-- events and webhook_deliveries partitioned by day of the event's created_at (docs/EVENTS.md,
-- "Retention"; docs/SCALING.md, "Partitions"). Events are kept EVENT_RETENTION_DAYS (30 or more)
-- and then pruned by age: with a partition per UTC day the pruning drops whole days, two
-- catalogue changes whatever a day holds, instead of deleting rows.
--
-- A delivery lives in the partition of its EVENT's day (event_created_at, a new column), not of
-- its own created_at: an event's deliveries, retries and redeliveries included, are dropped in
-- the same transaction as the event, as the foreign key's cascade did before.
--
-- Keys: a key of a partitioned table must contain the partition key, so events are unique by
-- (seq, created_at) and (id, created_at), and deliveries by (id, event_created_at). Foreign keys
-- to events go (webhook_deliveries.event_id, email_pending_events.event_seq): a foreign key to a
-- partitioned table would need the event's created_at in the referencing rows and would make
-- every detach check the referencing table. What they cascaded, the retention does itself
-- (src/events/partitions.ts). ids stay unique by construction: 80 random bits each (src/ids.ts).
--
-- The move runs in the migration's one transaction (src/db/migrate.ts): a process killed in the
-- middle leaves the tables as they were and the next start does the whole move again.

-- ---- The old tables out of the way ---------------------------------------------------------
do $$
declare
  c record;
begin
  for c in select conname, conrelid::regclass::text as rel from pg_constraint
            where confrelid = 'events'::regclass and contype = 'f'
  loop
    execute format('alter table %s drop constraint %I', c.rel, c.conname);
  end loop;
end
$$;

alter table events rename to events_unpartitioned;
alter index events_pkey rename to events_unpartitioned_pkey;
alter index events_id_key rename to events_unpartitioned_id_key;
alter index events_account_created rename to events_unpartitioned_account_created;
alter index events_account_type_created rename to events_unpartitioned_account_type_created;
alter index events_created rename to events_unpartitioned_created;

alter table webhook_deliveries rename to webhook_deliveries_unpartitioned;
alter index webhook_deliveries_pkey rename to webhook_deliveries_unpartitioned_pkey;
alter index webhook_deliveries_endpoint_created rename to webhook_deliveries_unpartitioned_endpoint_created;
alter index webhook_deliveries_pending rename to webhook_deliveries_unpartitioned_pending;
alter index webhook_deliveries_due rename to webhook_deliveries_unpartitioned_due;
alter index webhook_deliveries_event rename to webhook_deliveries_unpartitioned_event;

-- ---- The partitioned tables (the constraints keep the names they had) ----------------------
create sequence event_seqs as bigint;

create table events (
  seq         bigint not null default nextval('event_seqs'),
  id          text not null,
  account_id  text not null constraint events_account_id_fkey references accounts (id) on delete cascade,
  type        text not null,
  data        jsonb not null,
  created_at  timestamptz(3) not null default now(),
  constraint events_pkey primary key (seq, created_at),
  constraint events_id_key unique (id, created_at)
) partition by range (created_at);
alter sequence event_seqs owned by events.seq;

create table webhook_deliveries (
  id                text not null,
  account_id        text not null constraint webhook_deliveries_account_id_fkey references accounts (id) on delete cascade,
  endpoint_id       text not null constraint webhook_deliveries_endpoint_id_fkey references webhook_endpoints (id) on delete cascade,
  event_id          text not null,
  event_seq         bigint not null,
  attempt           integer not null constraint webhook_deliveries_attempt_check check (attempt >= 1),
  trigger           text not null default 'scheduled' constraint webhook_deliveries_trigger_check check (trigger in ('scheduled', 'manual')),
  status            text not null default 'pending' constraint webhook_deliveries_status_check check (status in ('pending', 'succeeded', 'failed')),
  next_attempt_at   timestamptz(3),
  response_status   integer,
  duration_ms       integer,
  response_body     text,
  error             text,
  attempted_at      timestamptz(3),
  created_at        timestamptz(3) not null default now(),
  retry             integer not null default 0 constraint webhook_deliveries_retry_check check (retry >= 0),
  event_created_at  timestamptz(3) not null,
  constraint webhook_deliveries_pkey primary key (id, event_created_at)
) partition by range (event_created_at);

create table events_default partition of events default;
create table webhook_deliveries_default partition of webhook_deliveries default;

-- A day for every day holding events (within ten years back and one ahead; rows outside stay in
-- the default partitions), and for today and the seven days after it.
do $$
declare
  d timestamptz;
  part text;
  bounds text;
begin
  for d in
    select distinct date_trunc('day', created_at, 'UTC') from events_unpartitioned
     where created_at >= now() - interval '10 years' and created_at < now() + interval '1 year'
    union
    select date_trunc('day', now(), 'UTC') + make_interval(days => g) from generate_series(0, 7) g
    order by 1
  loop
    part := 'p' || to_char(d at time zone 'UTC', 'YYYYMMDD');
    bounds := format('for values from (%L) to (%L)',
                     to_char(d at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                     to_char((d at time zone 'UTC') + interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
    execute format('create table %I partition of events %s', 'events_' || part, bounds);
    execute format('create table %I partition of webhook_deliveries %s', 'webhook_deliveries_' || part, bounds);
  end loop;
end
$$;

-- ---- The rows, before any trigger exists on the new tables ---------------------------------
-- (they are events already fanned out, not new ones).
insert into events (seq, id, account_id, type, data, created_at)
select seq, id, account_id, type, data, created_at from events_unpartitioned;

-- Every delivery has its event (the foreign key cascaded until now).
insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, attempt, trigger, status, next_attempt_at,
                                response_status, duration_ms, response_body, error, attempted_at, created_at, retry,
                                event_created_at)
select d.id, d.account_id, d.endpoint_id, d.event_id, d.event_seq, d.attempt, d.trigger, d.status, d.next_attempt_at,
       d.response_status, d.duration_ms, d.response_body, d.error, d.attempted_at, d.created_at, d.retry,
       e.created_at
  from webhook_deliveries_unpartitioned d
  join events_unpartitioned e on e.id = d.event_id;

-- New seqs continue after every seq the old identity handed out.
do $$
declare
  last bigint;
begin
  execute format('select last_value from %s', pg_get_serial_sequence('events_unpartitioned', 'seq')) into last;
  perform setval('event_seqs', greatest(coalesce((select max(seq) from events_unpartitioned), 0), coalesce(last, 0), 1));
end
$$;

create index events_account_created on events (account_id, created_at, id);
create index events_account_type_created on events (account_id, type, created_at, id);
create index events_created on events (created_at);
-- GET /events/{id} and the deliveries' joins find an event by id alone (one probe per day).
create index events_id on events (id);
-- The email outbox finds its events by seq.
create index events_seq on events (seq);

create index webhook_deliveries_endpoint_created on webhook_deliveries (endpoint_id, created_at, id);
create index webhook_deliveries_pending on webhook_deliveries (endpoint_id, event_seq, id) where status = 'pending';
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_event on webhook_deliveries (event_id);
-- Lookups of one delivery by id (the worker's updates, GET of a delivery's owner).
create index webhook_deliveries_id on webhook_deliveries (id);

-- ---- The fan-out: deliveries carry their event's created_at --------------------------------
create or replace function events_fan_out() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, next_attempt_at)
  select ph_new_id('whdl'), e.account_id, w.id, e.id, e.seq, e.created_at, 1, 'scheduled', now()
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

-- The triggers of the old tables, on the new ones (events_fan_out, events_email_fan_out,
-- webhook_deliveries' notify, and any a later feature added before this migration ran).
do $$
declare
  t record;
begin
  for t in
    select tg.tgname, tg.tgrelid::regclass::text as old, pg_get_triggerdef(tg.oid) as def from pg_trigger tg
     where tg.tgrelid in ('events_unpartitioned'::regclass, 'webhook_deliveries_unpartitioned'::regclass)
       and not tg.tgisinternal
  loop
    execute format('drop trigger %I on %s', t.tgname, t.old);
    execute regexp_replace(t.def, ' ON ((\S+\.)?)(events|webhook_deliveries)_unpartitioned ', ' ON \1\3 ');
  end loop;
end
$$;

drop table webhook_deliveries_unpartitioned;
drop table events_unpartitioned;
