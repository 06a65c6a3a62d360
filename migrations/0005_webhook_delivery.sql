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
