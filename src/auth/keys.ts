import crypto from 'node:crypto';
import type { Database, Queryable } from '../db/types.js';
import { newId } from '../ids.js';
import { type Plan, PLANS } from './plans.js';


/** A fixed prefix lets secret scanners recognise leaked keys. */
export const KEY_PREFIX = 'ph_live_';
const KEY_PATTERN = /^ph_live_[A-Za-z0-9_-]{43}$/;
/** A key (or the start of one) inside other text: what the request log redacts. */
export const KEY_IN_TEXT = /ph_live_[A-Za-z0-9_-]+/g;

export interface ApiKey {
  id: string;
  account_id: string;
  name: string | null;
  plan: Plan;
  key_prefix: string;
  created_at: Date;
  revoked_at: Date | null;
}

/** What a request is authenticated as. */
export interface Principal {
  keyId: string;
  accountId: string;
  plan: Plan;
  limit: number;
}

export function hashKey(key: string): string {
  return crypto.hash('sha256', key, 'hex');
}

export function looksLikeKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Channel on which revocations are announced, so every API process drops its cached copy. */
export const KEY_REVOKED_CHANNEL = 'pricehound_key_revoked';

const COLUMNS = 'id, account_id, name, plan, key_prefix, created_at, revoked_at';

export async function createAccount(db: Queryable, name: string | null = null): Promise<string> {
  const id = newId('acct');
  await db.query('insert into accounts (id, name) values ($1, $2)', [id, name]);
  return id;
}

export async function accountExists(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query('select 1 from accounts where id = $1', [id]);
  return r.rows.length > 0;
}

export class UnknownAccountError extends Error {
  constructor(readonly accountId: string) {
    super(`no account ${accountId}`);
  }
}

/** Creates a key (and a new account when `accountId` is not given). The key is returned only here. */
export async function createKey(
  db: Database,
  opts: { plan: Plan; name?: string | null; accountId?: string | null },
): Promise<ApiKey & { key: string }> {
  const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
  return db.transaction(async (tx) => {
    let accountId = opts.accountId ?? null;
    if (accountId) {
      if (!(await accountExists(tx, accountId))) throw new UnknownAccountError(accountId);
    } else {
      accountId = await createAccount(tx, opts.name ?? null);
    }
    const r = await tx.query<ApiKey>(
      `insert into api_keys (id, account_id, name, plan, key_hash, key_prefix)
       values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
      [newId('key'), accountId, opts.name ?? null, opts.plan, hashKey(key), key.slice(0, KEY_PREFIX.length + 6)],
    );
    return { ...r.rows[0]!, key };
  });
}

export async function listKeys(db: Queryable, accountId?: string): Promise<ApiKey[]> {
  const r = accountId
    ? await db.query<ApiKey>(`select ${COLUMNS} from api_keys where account_id = $1 order by created_at, id`, [accountId])
    : await db.query<ApiKey>(`select ${COLUMNS} from api_keys order by created_at, id`);
  return r.rows;
}

/** Revokes a key; returns it, or undefined when there is no such key. Idempotent. */
export async function revokeKey(db: Database, id: string): Promise<ApiKey | undefined> {
  return db.transaction(async (tx) => {
    const r = await tx.query<ApiKey>(
      `update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning ${COLUMNS}`,
      [id],
    );
    if (r.rows.length > 0) await tx.query('select pg_notify($1, $2)', [KEY_REVOKED_CHANNEL, id]);
    return r.rows[0];
  });
}

export async function findActiveKeyByHash(db: Queryable, hash: string): Promise<Principal | undefined> {
  const r = await db.query<{ id: string; account_id: string; plan: Plan }>(
    'select id, account_id, plan from api_keys where key_hash = $1 and revoked_at is null',
    [hash],
  );
  const row = r.rows[0];
  return row ? { keyId: row.id, accountId: row.account_id, plan: row.plan, limit: PLANS[row.plan] } : undefined;
}
