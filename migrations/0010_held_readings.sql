-- A price that cannot be right is held, not recorded (docs/MONITORING.md "Held readings",
-- design/API.md "Checks: a price that cannot be right is held"). Numbered 0010: 0009 belongs
-- to the alerts work of the same issue; src/db/migrate.ts applies whatever is missing, so the
-- gap is harmless.

-- How far a reading may be from the listing's last recorded price before it is held: a factor
-- (4: a fall of 75 % or a rise of 300 %). NULL: the account's default; 0: never hold.
alter table listings add column hold_factor float8 check (hold_factor = 0 or (hold_factor > 1 and hold_factor <= 1000));
-- The listing's held reading (a listing_checks id) waiting for its recheck or a person; NULL:
-- none. A later check that records or holds a price replaces it.
alter table listings add column held_check_id bigint;
-- The reading a person rejected last: read again, it is held again (and never confirmed by a
-- recheck) until a price is recorded.
alter table listings add column rejected_price numeric(19, 4);
alter table listings add column rejected_currency text;

-- A held check: ok is false and error_code NULL; these say why it was held. A check that
-- recorded a held reading read again carries the same four, and confirmed_by names the held
-- check (which in turn names it).
alter table listing_checks add column held_reason text;
alter table listing_checks add column held_previous_price numeric(19, 4);
alter table listing_checks add column held_previous_currency text;
-- max(read / previous, previous / read); NULL when the currencies differ or a price is 0.
alter table listing_checks add column held_factor float8;
-- When the page was read (the held check's time, the observation's observed_at on accept).
alter table listing_checks add column read_at timestamptz(3);
alter table listing_checks add column confirmed_by bigint;
-- What became of a held reading. NULL: still the listing's held reading (pending), or replaced
-- by a later check (superseded).
alter table listing_checks add column held_resolution text check (held_resolution in ('accepted', 'rejected', 'confirmed'));
alter table listing_checks add column resolved_at timestamptz(3);
