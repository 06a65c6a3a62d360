-- The key that turns the bigint ids of observations, price changes and checks into public ids
-- (src/ids.ts, docs/API-DECISIONS.md "Public ids of sequences"). One row, written by the first
-- process that starts (src/db/id-key.ts): backups must keep it, or every such id changes.
create table id_key (
  singleton boolean primary key default true check (singleton),
  key text not null check (key ~ '^[0-9a-f]{32}$'),
  created_at timestamptz not null default now()
);
