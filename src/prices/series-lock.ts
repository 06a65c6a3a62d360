import type { Queryable } from '../db/types.js';

/**
 * The lock that orders a price series' observations (docs/alerts/firing.md, "Order"). Every
 * writer takes the series' price_series row before it inserts observations (the row is created
 * when missing), holds it to its commit, and inserts a batch's observations of a series in time
 * order. So within a series the observations' ids follow the order in which writers saw the
 * series: an observation with a smaller id was recorded before (or, in one batch, observed
 * before) one with a larger id. Alert evaluation relies on it (what was there when an
 * observation arrived: its previous price, whether it came late, its lows), and preview replays
 * it from the ids alone.
 *
 * One statement: `on conflict do update ... where false` updates nothing but locks the row that
 * exists, and an inserted row is ours until commit. Rows go in key order, so two writers of
 * several series never wait for each other in a circle. The price_observations trigger takes
 * the same lock again (a no-op by then).
 */
const LOCK = `on conflict (product_id, competitor_id) do update set account_id = excluded.account_id where false`;

/** Locks the series (product, competitor; null: our own shop) of the observations about to be inserted. */
export async function lockSeries(
  tx: Queryable,
  accountId: string,
  series: readonly { product_id: string; competitor_id: string | null }[],
): Promise<void> {
  if (series.length === 0) return;
  await tx.query(
    `/* lockSeries */
     insert into price_series (account_id, product_id, competitor_id)
     select distinct $1::text, u.product_id, u.competitor_id
       from unnest($2::text[], $3::text[]) as u (product_id, competitor_id)
      order by 2, 3
     ${LOCK}`,
    [accountId, series.map((s) => s.product_id), series.map((s) => s.competitor_id)],
  );
}

/**
 * Locks the series of a listing (its product and competitor) before a check records its price;
 * with `accountId`, only a listing of that account (the id came from a request).
 */
export async function lockListingSeries(
  tx: Queryable,
  listingId: string,
  accountId: string | null = null,
): Promise<void> {
  await tx.query(
    `/* lockListingSeries */
     insert into price_series (account_id, product_id, competitor_id)
     select account_id, product_id, competitor_id from listings where id = $1 and ($2::text is null or account_id = $2)
     ${LOCK}`,
    [listingId, accountId],
  );
}
