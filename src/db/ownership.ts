import type { Queryable } from './types.js';

/** The tables whose rows an account owns by id. */
export type OwnedTable =
  'products' | 'competitors' | 'listings' | 'alerts' | 'alert_events' | 'webhook_endpoints' | 'webhook_deliveries';

/** Whether the row `id` of `table` is in the account (one primary-key probe). */
export async function accountOwns(db: Queryable, accountId: string, table: OwnedTable, id: string): Promise<boolean> {
  const r = await db.query(`/* accountOwns */ select 1 from ${table} where id = $1 and account_id = $2`, [
    id,
    accountId,
  ]);
  return r.rows.length > 0;
}

/**
 * The owned rows by the prefix of their public id (`newId(prefix)` in each area), and what their
 * 404 calls them (`ERRORS.notFound(what)`).
 */
const OWNED_BY_PREFIX = new Map<string, { table: OwnedTable; what: string }>([
  ['prod', { table: 'products', what: 'Product' }],
  ['comp', { table: 'competitors', what: 'Competitor' }],
  ['lst', { table: 'listings', what: 'Listing' }],
  ['alrt', { table: 'alerts', what: 'Alert' }],
  ['alev', { table: 'alert_events', what: 'Alert event' }],
  ['wh', { table: 'webhook_endpoints', what: 'Webhook' }],
  ['whdl', { table: 'webhook_deliveries', what: 'Webhook delivery' }],
]);

/**
 * The first of `ids` that names an owned row the account no longer has, as its 404 calls it;
 * undefined when all are there. Ids of other kinds (or not ids at all) are not looked at.
 */
export async function firstMissing(
  db: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<string | undefined> {
  for (const id of ids) {
    const cut = id.indexOf('_');
    const owned = cut > 0 ? OWNED_BY_PREFIX.get(id.slice(0, cut)) : undefined;
    if (owned && !(await accountOwns(db, accountId, owned.table, id))) return owned.what;
  }
  return undefined;
}
