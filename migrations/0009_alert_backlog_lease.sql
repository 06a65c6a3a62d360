-- A queued batch's evaluation reads the batch before its short write transaction (so the
-- embedded engine serves other requests meanwhile: src/alerts/engine/backlog.ts), so a worker
-- takes the batch with a lease instead of a row lock held throughout: another worker skips it
-- until the lease ends, and takes it over if the worker died.
-- Points are judged against the observations recorded before the batch by the series' arrival
-- order (ids, src/prices/series-lock.ts), not by created_at any more.
alter table alert_backlog add column locked_by text;
alter table alert_backlog add column locked_until timestamptz(3);
