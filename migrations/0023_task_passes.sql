-- Where a background task's long pass over every product stands, kept in the database so that
-- the pass runs when it is due and resumes where it stopped, instead of starting again from the
-- first product on every start of every process (src/prices/trends/job.ts: the trends' blocks'
-- pass over the whole history, ~10 ms a product with nothing to build, once a week).
--
--   task     the pass's name;
--   cursor   the last product id the pass in progress has done (null: none in progress);
--   done_at  when the last pass finished, by the application's clock (null: never).
--
-- A process advances the cursor in the transaction that does the batch after it, holding this
-- row's lock: any number of processes share one pass, batch by batch, and a batch cut off by a
-- crash is done again by whoever comes next.

create table task_passes (
  task    text primary key,
  cursor  text,
  done_at timestamptz
);
