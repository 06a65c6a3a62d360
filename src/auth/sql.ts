import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, timestampKey } from '../pagination/sort.js';
import type { Plan } from './plans.js';
import type { Scope } from './scopes.js';

/**
 * Every query of accounts and API keys, parameterised. The operator's side (the CLI's `keys`
 * commands, through src/auth/keys.ts) sees every account; the API's side (src/auth/service.ts)
 * is scoped by the calling key's account in each statement.
 */

/** An API key as stored: never the key itself, only its hash (not read here) and first characters. */
export interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  plan: Plan;
  scope: Scope;
  key_prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, account_id, name, plan, scope, key_prefix, created_at, last_used_at, revoked_at';

/** Channel on which revocations are announced, so every API process drops its cached copy. */
export const KEY_REVOKED_CHANNEL = 'pricehound_key_revoked';

export async function insertAccount(db: Queryable, id: string, name: string | null): Promise<void> {
  await db.query('/* insertAccount */ insert into accounts (id, name) values ($1, $2)', [id, name]);
}

export async function accountExists(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query('/* accountExists */ select 1 from accounts where id = $1', [id]);
  return r.rows.length > 0;
}

export interface NewKey {
  id: string;
  accountId: string;
  name: string | null;
  plan: Plan;
  scope: Scope;
  hash: string;
  prefix: string;
}

export async function insertKey(db: Queryable, k: NewKey): Promise<KeyRow> {
  const r = await db.query<KeyRow>(
    `/* insertKey */
     insert into api_keys (id, account_id, name, plan, scope, key_hash, key_prefix)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [k.id, k.accountId, k.name, k.plan, k.scope, k.hash, k.prefix],
  );
  return r.rows[0]!;
}

/** Every key, or an account's, oldest first: the operator's listing. */
export async function listAllKeys(db: Queryable, accountId?: string): Promise<KeyRow[]> {
  const r = accountId
    ? await db.query<KeyRow>(
        `/* listAllKeys */ select ${COLUMNS} from api_keys where account_id = $1 order by created_at, id`,
        [accountId],
      )
    : await db.query<KeyRow>(`/* listAllKeys */ select ${COLUMNS} from api_keys order by created_at, id`);
  return r.rows;
}

export interface ActiveKey {
  id: string;
  account_id: string;
  plan: Plan;
  scope: Scope;
}

export async function findActiveKeyByHash(db: Queryable, hash: string): Promise<ActiveKey | undefined> {
  const r = await db.query<ActiveKey>(
    '/* findActiveKeyByHash */ select id, account_id, plan, scope from api_keys where key_hash = $1 and revoked_at is null',
    [hash],
  );
  return r.rows[0];
}

/** Revokes any key (the operator's). Idempotent: a revoked key keeps its first revocation time. */
export async function revokeAnyKey(db: Queryable, id: string): Promise<KeyRow | undefined> {
  const r = await db.query<KeyRow>(
    `/* revokeAnyKey */ update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning ${COLUMNS}`,
    [id],
  );
  return r.rows[0];
}

/** Announced after a revocation (delivered at commit): every process's key cache drops the key. */
export async function notifyRevoked(db: Queryable, id: string): Promise<void> {
  await db.query('/* notifyRevoked */ select pg_notify($1, $2)', [KEY_REVOKED_CHANNEL, id]);
}

// ---- The API's side: one account's keys -------------------------------------------------------

export async function getAccountKey(db: Queryable, accountId: string, id: string): Promise<KeyRow | undefined> {
  const r = await db.query<KeyRow>(
    `/* getAccountKey */ select ${COLUMNS} from api_keys where id = $1 and account_id = $2`,
    [id, accountId],
  );
  return r.rows[0];
}

export const KEY_SORTS = {
  created_at: timestampKey('created_at', (r: KeyRow) => r.created_at),
} satisfies Record<string, SortKey<KeyRow>>;

export interface KeyFilters {
  scope?: Scope | undefined;
  revoked?: boolean | undefined;
}

export async function listAccountKeys(
  db: Queryable,
  accountId: string,
  f: KeyFilters,
  page: PageRequest<KeyRow>,
): Promise<KeyRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.scope !== undefined) add((p) => `scope = ${p}`, f.scope);
  if (f.revoked !== undefined) where.push(f.revoked ? 'revoked_at is not null' : 'revoked_at is null');
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<KeyRow>(
    `/* listAccountKeys */ select ${COLUMNS} from api_keys where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

export async function renameAccountKey(
  db: Queryable,
  accountId: string,
  id: string,
  name: string | null,
): Promise<KeyRow | undefined> {
  const r = await db.query<KeyRow>(
    `/* renameAccountKey */ update api_keys set name = $3 where id = $1 and account_id = $2 returning ${COLUMNS}`,
    [id, accountId, name],
  );
  return r.rows[0];
}

/**
 * Locks the account's row until the transaction ends: revocations of one account's keys take
 * turns, so two requests revoking the last two full keys at once cannot both see the other one
 * still standing.
 */
export async function lockAccount(db: Queryable, accountId: string): Promise<void> {
  await db.query('/* lockAccount */ select 1 from accounts where id = $1 for update', [accountId]);
}

/** The account's unrevoked full keys other than `exceptId`. */
export async function otherActiveFullKeys(db: Queryable, accountId: string, exceptId: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    `/* otherActiveFullKeys */
     select count(*)::int as n from api_keys
      where account_id = $1 and id <> $2 and scope = 'full' and revoked_at is null`,
    [accountId, exceptId],
  );
  return r.rows[0]!.n;
}

export async function revokeAccountKey(db: Queryable, accountId: string, id: string): Promise<KeyRow | undefined> {
  const r = await db.query<KeyRow>(
    `/* revokeAccountKey */
     update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 and account_id = $2 returning ${COLUMNS}`,
    [id, accountId],
  );
  return r.rows[0];
}
