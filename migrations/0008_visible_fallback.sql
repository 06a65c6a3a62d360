-- A listing can turn off the visible-price finder (docs/EXTRACTION.md "Visible-price finder"):
-- with false, only the page's structured data and the listing's selector give a price.
alter table listings add column visible_fallback boolean not null default true;
