-- Email (docs/EMAIL.md): subscriptions of an address to an account's events, confirmed with a
-- mailed code before anything else is sent; the events of one minute waiting to be mailed
-- together; and the mails themselves, an outbox the worker sends over SMTP with retries.

create table email_subscriptions (
  id               text primary key,
  account_id       text not null references accounts (id) on delete cascade,
  address          text not null,
  event_types      text[] not null default '{alert.triggered}',
  digest           text not null default 'none' check (digest in ('none', 'daily', 'weekly')),
  digest_hour      smallint not null default 8 check (digest_hour between 0 and 23),
  time_zone        text not null default 'UTC',
  enabled          boolean not null default true,
  confirmed_at     timestamptz(3),
  -- HMAC-SHA256 (hex) of the 6-digit code, keyed by a key derived from the deployment's key.
  code_hash        text,
  code_failures    integer not null default 0,
  -- Set at the fifth wrong code: the subscription can no longer be confirmed.
  locked_at        timestamptz(3),
  -- Part of every unsubscribe token; replaced when a token is used, so a token works once.
  unsubscribe_nonce text not null,
  unsubscribed_at  timestamptz(3),
  -- The end of the last digest period mailed (null: none yet).
  digest_through   timestamptz(3),
  created_at       timestamptz(3) not null default now(),
  updated_at       timestamptz(3) not null default now()
);
create index email_subscriptions_account_created on email_subscriptions (account_id, created_at, id);
create index email_subscriptions_digest on email_subscriptions (digest) where digest <> 'none' and confirmed_at is not null and enabled;

-- Events waiting for the immediate mail of their minute (subscriptions with digest 'none').
create table email_pending_events (
  subscription_id  text not null references email_subscriptions (id) on delete cascade,
  event_seq        bigint not null references events (seq) on delete cascade,
  minute           timestamptz(3) not null,
  primary key (subscription_id, event_seq)
);
create index email_pending_events_minute on email_pending_events (minute, subscription_id);

-- One row per mail: `pending` until the SMTP server accepts it (`sent`) or the retries run out
-- (`failed`). `dedupe_key` makes each mail once: the code mail of a confirmation round, the
-- immediate mail of a (subscription, minute), the digest of a (subscription, period).
create table email_messages (
  id               text primary key,
  account_id       text not null references accounts (id) on delete cascade,
  subscription_id  text not null references email_subscriptions (id) on delete cascade,
  kind             text not null check (kind in ('confirmation', 'events', 'digest')),
  dedupe_key       text not null unique,
  recipient        text not null,
  subject          text not null,
  text_body        text not null,
  html_body        text not null,
  unsubscribe_url  text,
  status           text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
  attempts         integer not null default 0,
  next_attempt_at  timestamptz(3) not null default now(),
  locked_by        text,
  locked_until     timestamptz(3),
  last_error       text,
  sent_at          timestamptz(3),
  created_at       timestamptz(3) not null default now()
);
create index email_messages_due on email_messages (next_attempt_at) where status = 'pending';
create index email_messages_subscription on email_messages (subscription_id, created_at);

-- Every event an enabled, confirmed, immediate subscription wants waits for its minute's mail,
-- written in the transaction that wrote the event (the outbox, as for webhooks).
create function events_email_fan_out() returns trigger language plpgsql as $$
begin
  insert into email_pending_events (subscription_id, event_seq, minute)
  select s.id, e.seq, date_trunc('minute', e.created_at)
    from new_rows e
    join email_subscriptions s
      on s.account_id = e.account_id and s.enabled and s.confirmed_at is not null and s.digest = 'none'
     and (cardinality(s.event_types) = 0 or e.type = any (s.event_types))
   where e.type <> 'webhook.test'
  on conflict do nothing;
  return null;
end
$$;

create trigger events_email_fan_out
  after insert on events
  referencing new table as new_rows
  for each statement execute function events_email_fan_out();
