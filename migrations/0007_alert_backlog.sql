-- Alert evaluation of large batches after their commit (src/alerts/engine/backlog.ts,
-- docs/alerts/firing.md "Large batches"). A batch of more than ALERT_INLINE_MAX observations
-- (or any batch of an account that already has one waiting) is recorded here, in the
-- transaction that inserted the observations, instead of being evaluated there; a worker
-- evaluates the rows of each account oldest first and deletes each in the transaction that
-- records its firings, so every batch is evaluated exactly once.
create table alert_backlog (
  id              bigserial primary key,
  account_id      text not null references accounts (id) on delete cascade,
  observation_ids bigint[] not null,
  -- The inserting transaction's now(): the observations' created_at. Points are judged against
  -- what was recorded before it (the series' previous price, whether a point is late).
  created_at      timestamptz(3) not null default now()
);

create index alert_backlog_account on alert_backlog (account_id, id);

-- Wake the evaluators at commit (one NOTIFY per statement).
create function alert_backlog_queued() returns trigger language plpgsql as $$
begin
  perform pg_notify('alert_backlog', '');
  return null;
end
$$;

create trigger alert_backlog_queued
  after insert on alert_backlog
  for each statement
  execute function alert_backlog_queued();
