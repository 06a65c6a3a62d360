-- The series index of price_observations with the columns the trends' edges and the raw
-- history read (docs/SCALING.md, "Indexes built online"): a series-day's rows are then read
-- from one leaf page of the index instead of a heap page each (rows arrive in time order, so a
-- series' rows of a day lie on as many pages as it has rows). At 50.5 M observations it took a
-- first read of one product's trends from ~430 pages to ~260.
--
-- This migration only declares it, on the partitioned table alone (ON ONLY: instant, whatever
-- the table holds). The index is not valid until every partition has its own, and partitions
-- made from now on get theirs as they are created. The background task `indexes`
-- (src/db/online-indexes.ts) builds the existing partitions' indexes one at a time with CREATE
-- INDEX CONCURRENTLY, which writers do not wait for, attaches each, and once the index is valid
-- drops price_observations_series_time, whose keys it has.
create index if not exists price_observations_series_cover on only price_observations
  (product_id, competitor_id, observed_at) include (account_id, id, price, currency, in_stock, samples, price_sum);
