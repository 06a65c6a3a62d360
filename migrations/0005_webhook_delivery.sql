-- Webhook delivery (src/webhooks/delivery, docs/WEBHOOKS.md "Delivery").
--
-- `retry`: the step of the retry schedule (WEBHOOK_RETRY_SCHEDULE) an attempt is at. 0 for the
-- first attempt of a chain: the trigger's attempt 1, and every manual redelivery (which starts a
-- chain of its own, with the whole schedule ahead of it); a failed attempt with steps left adds
-- the next one at retry + 1. `attempt` counts every try of the event to the endpoint and cannot
-- tell the two apart once a redelivery is in between.
alter table webhook_deliveries add column retry integer not null default 0 check (retry >= 0);

-- The claim walks enabled endpoints and asks each for its oldest pending attempt
-- (webhook_deliveries_pending); disabled endpoints with a backlog are never walked.
create index webhook_endpoints_deliverable on webhook_endpoints (locked_until) where enabled;

-- An endpoint enabled again, or back up after failing, has a backlog that no new event announces:
-- wake the delivery workers (at commit) as the fan-out does, whichever statement made the change.
create function webhook_endpoints_resumed() returns trigger language plpgsql as $$
begin
  perform pg_notify('webhook_deliveries', '');
  return null;
end
$$;

create trigger webhook_endpoints_resumed
  after update of enabled, failing_since on webhook_endpoints
  for each row
  when (new.enabled and (not old.enabled or (old.failing_since is not null and new.failing_since is null)))
  execute function webhook_endpoints_resumed();
