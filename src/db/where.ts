/**
 * The WHERE of an account's filtered list: clauses joined with `and`, each value a `$n`
 * parameter. `add` appends a clause built around the next parameter's placeholder; `where` and
 * `params` stay open for the caller's own clauses (keyset position, limit).
 */
export function accountWhere(accountId: string) {
  const params: unknown[] = [accountId];
  const where = ['account_id = $1'];
  const add = (sql: (p: string) => string, v: unknown) => {
    params.push(v);
    where.push(sql(`$${params.length}`));
  };
  return { params, where, add };
}
