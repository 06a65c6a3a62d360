-- API keys over HTTP (design/API.md "API keys over HTTP", docs/API-DECISIONS.md "API keys over
-- HTTP"). Numbered 0011: 0009 and 0010 belong to other work of the same time; src/db/migrate.ts
-- applies whatever is missing, so a gap is harmless.

-- What a key may do: `full` everything, `read` only what changes nothing (GET, HEAD, the alert
-- preview and the extraction dry run). Every key made before this keeps what it had: `full`.
alter table api_keys add column scope text not null default 'full' check (scope in ('full', 'read'));

-- When the key last authenticated a request, to within the usage recorder's flush interval
-- (src/usage/recorder.ts writes it with the request counts, never once per request). NULL: not
-- used since this column exists.
alter table api_keys add column last_used_at timestamptz(3);
