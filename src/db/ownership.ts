import type { Queryable } from './types.js';

/** The tables whose rows an account owns by id. */
export type OwnedTable = 'products' | 'competitors' | 'listings';

/** Whether the row `id` of `table` is in the account (one primary-key probe). */
export async function accountOwns(db: Queryable, accountId: string, table: OwnedTable, id: string): Promise<boolean> {
  const r = await db.query(`/* accountOwns */ select 1 from ${table} where id = $1 and account_id = $2`, [id, accountId]);
  return r.rows.length > 0;
}
