-- Accounts own everything; API keys belong to one account and carry its plan.
-- Timestamps are timestamptz(3): millisecond precision round-trips exactly through JS Dates,
-- which keeps keyset cursors on created_at/updated_at exact.

create table accounts (
  id          text primary key,
  name        text,
  created_at  timestamptz(3) not null default now()
);

create table api_keys (
  id          text primary key,
  account_id  text not null references accounts (id) on delete cascade,
  name        text,
  plan        text not null check (plan in ('free', 'starter', 'business')),
  -- sha256 of the whole key, hex. Keys are 256-bit random, so a fast hash is enough.
  key_hash    text not null unique,
  -- the first characters of the key, to tell keys apart in listings
  key_prefix  text not null,
  created_at  timestamptz(3) not null default now(),
  revoked_at  timestamptz(3)
);
create index api_keys_account on api_keys (account_id);

-- Requests per key per UTC hour, flushed from the rate limiter in batches (see src/usage).
create table api_usage (
  key_id    text not null references api_keys (id) on delete cascade,
  hour      timestamptz not null,
  requests  bigint not null default 0,
  rejected  bigint not null default 0,
  primary key (key_id, hour)
);

create table products (
  id           text primary key,
  account_id   text not null references accounts (id) on delete cascade,
  name         text not null,
  brand        text,
  sku          text,
  category     text,
  description  text,
  base_price   numeric(19, 4) not null check (base_price >= 0),
  currency     text not null check (currency ~ '^[A-Z]{3}$'),
  url          text,
  created_at   timestamptz(3) not null default now(),
  updated_at   timestamptz(3) not null default now(),
  -- NULL SKUs are distinct, so only products that have a SKU compete for it.
  constraint products_account_sku_key unique (account_id, sku)
);
create index products_account_created on products (account_id, created_at, id);
create index products_account_updated on products (account_id, updated_at, id);
create index products_account_price on products (account_id, base_price, id);
create index products_account_name on products (account_id, (name collate "C"), id);

-- Stored responses of POSTs sent with an Idempotency-Key (kept 24 hours).
create table idempotency_keys (
  account_id   text not null references accounts (id) on delete cascade,
  key          text not null,
  fingerprint  text not null,
  -- NULL while the first request is still running
  status       integer,
  body         text,
  headers      jsonb,
  created_at   timestamptz(3) not null default now(),
  primary key (account_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
