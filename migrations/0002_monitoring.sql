-- Competitors, listings (a product's page on a competitor's site, or on our own shop) and the
-- prices their checks observe. Checks are scheduled by listings.next_check_at and claimed by
-- workers with FOR UPDATE SKIP LOCKED (src/jobs), so any number of workers share them.

create table competitors (
  id          text primary key,
  account_id  text not null references accounts (id) on delete cascade,
  name        text not null,
  website     text not null,
  -- host of `website`, lower case, without a leading "www."
  domain      text not null,
  notes       text,
  -- optional HTTP(S) proxy for this competitor's pages (sites that block data-centre addresses)
  proxy_url   text,
  created_at  timestamptz(3) not null default now(),
  updated_at  timestamptz(3) not null default now()
);
create index competitors_account_created on competitors (account_id, created_at, id);
create index competitors_account_domain on competitors (account_id, domain);

create table listings (
  id                      text primary key,
  account_id              text not null references accounts (id) on delete cascade,
  product_id              text not null references products (id) on delete cascade,
  -- NULL: the page is our own shop's (the product's own url, monitored the same way)
  competitor_id           text references competitors (id) on delete cascade,
  url                     text not null,
  -- extraction hints
  selector                text,
  currency_override       text check (currency_override ~ '^[A-Z]{3}$'),
  check_interval_seconds  integer not null default 21600 check (check_interval_seconds between 300 and 2592000),
  enabled                 boolean not null default true,
  respect_robots          boolean not null default true,
  render_js               boolean not null default false,
  -- state: pending (never checked), ok, failing (last check failed), flagged (failed repeatedly)
  status                  text not null default 'pending' check (status in ('pending', 'ok', 'failing', 'flagged')),
  last_checked_at         timestamptz(3),
  last_success_at         timestamptz(3),
  last_price              numeric(19, 4),
  last_currency           text,
  in_stock                boolean,
  last_error              text,
  consecutive_failures    integer not null default 0,
  next_check_at           timestamptz(3) not null default now(),
  -- the worker holding the listing while it checks it, and until when
  locked_by               text,
  locked_until            timestamptz(3),
  created_at              timestamptz(3) not null default now(),
  updated_at              timestamptz(3) not null default now(),
  constraint listings_product_url_key unique (product_id, url)
);
create index listings_due on listings (next_check_at) where enabled;
create index listings_account_created on listings (account_id, created_at, id);
create index listings_product on listings (product_id, created_at, id);
create index listings_competitor on listings (competitor_id, created_at, id);

-- Every price seen, from checks ('scrape') or sent through the API ('api').
create table price_observations (
  id             bigint generated always as identity primary key,
  account_id     text not null references accounts (id) on delete cascade,
  product_id     text not null references products (id) on delete cascade,
  competitor_id  text references competitors (id) on delete cascade,
  listing_id     text references listings (id) on delete set null,
  price          numeric(19, 4) not null check (price >= 0),
  currency       text not null check (currency ~ '^[A-Z]{3}$'),
  in_stock       boolean,
  observed_at    timestamptz(3) not null,
  source         text not null check (source in ('scrape', 'api')),
  created_at     timestamptz(3) not null default now()
);
create index price_observations_product_time on price_observations (product_id, observed_at);
create index price_observations_listing_time on price_observations (listing_id, observed_at);

-- The outcome of recent checks of a listing (the worker keeps the last 50), with every price
-- candidate found, so a user can see why a price was chosen and pin a selector.
create table listing_checks (
  id           bigint generated always as identity primary key,
  listing_id   text not null references listings (id) on delete cascade,
  started_at   timestamptz(3) not null,
  duration_ms  integer not null,
  ok           boolean not null,
  http_status  integer,
  final_url    text,
  price        numeric(19, 4),
  currency     text,
  in_stock     boolean,
  source       text,
  error_code   text,
  error        text,
  candidates   jsonb not null default '[]'
);
create index listing_checks_listing on listing_checks (listing_id, started_at desc);
