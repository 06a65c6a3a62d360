import crypto from 'node:crypto';
import type { Database, Queryable } from '../db/types.js';
import { newId } from '../ids.js';
import { type Plan, PLANS } from './plans.js';
import type { Scope } from './scopes.js';
import {
  accountExists,
  findActiveKeyByHash,
  insertAccount,
  insertKey,
  KEY_REVOKED_CHANNEL,
  type KeyRow,
  listAllKeys,
  notifyRevoked,
  revokeAnyKey,
} from './sql.js';

/** A fixed prefix lets secret scanners recognise leaked keys. */
export const KEY_PREFIX = 'ph_live_';
const KEY_PATTERN = /^ph_live_[A-Za-z0-9_-]{43}$/;
/** A key (or the start of one) inside other text: what the request log redacts. */
export const KEY_IN_TEXT = /ph_live_[A-Za-z0-9_-]+/g;

/** An API key as stored (src/auth/sql.ts): never the key itself. */
export type ApiKey = KeyRow;

/** What a request is authenticated as. */
export interface Principal {
  keyId: string;
  accountId: string;
  plan: Plan;
  scope: Scope;
  limit: number;
}

export function hashKey(key: string): string {
  return crypto.hash('sha256', key, 'hex');
}

export function looksLikeKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export { KEY_REVOKED_CHANNEL };

/** How many first characters of a key the API shows as its `prefix`: `ph_live_` and 4 of the secret (24 bits). */
export const SHOWN_PREFIX_LENGTH = 12;

export async function createAccount(db: Queryable, name: string | null = null): Promise<string> {
  const id = newId('acct');
  await insertAccount(db, id, name);
  return id;
}

export { accountExists };

export class UnknownAccountError extends Error {
  constructor(readonly accountId: string) {
    super(`no account ${accountId}`);
  }
}

/**
 * Creates a key (and a new account when `accountId` is not given). The key is returned only here.
 * Stored: its SHA-256 and its first 14 characters (`key_prefix`; the API shows 12 of them).
 */
export async function createKey(
  db: Database,
  opts: { plan: Plan; scope?: Scope; name?: string | null; accountId?: string | null },
): Promise<ApiKey & { key: string }> {
  const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
  return db.transaction(async (tx) => {
    let accountId = opts.accountId ?? null;
    if (accountId) {
      if (!(await accountExists(tx, accountId))) throw new UnknownAccountError(accountId);
    } else {
      accountId = await createAccount(tx, opts.name ?? null);
    }
    const row = await insertKey(tx, {
      id: newId('key'),
      accountId,
      name: opts.name ?? null,
      plan: opts.plan,
      scope: opts.scope ?? 'full',
      hash: hashKey(key),
      prefix: key.slice(0, KEY_PREFIX.length + 6),
    });
    return { ...row, key };
  });
}

export async function listKeys(db: Queryable, accountId?: string): Promise<ApiKey[]> {
  return listAllKeys(db, accountId);
}

/**
 * Revokes a key, whichever account's (the operator's, from the CLI: no lock-out rule there, the
 * operator can always make another); returns it, or undefined when there is no such key.
 * Idempotent. Every process's cache drops it when the NOTIFY arrives (src/auth/key-cache.ts).
 */
export async function revokeKey(db: Database, id: string): Promise<ApiKey | undefined> {
  return db.transaction(async (tx) => {
    const row = await revokeAnyKey(tx, id);
    if (row) await notifyRevoked(tx, id);
    return row;
  });
}

export async function findActiveKey(db: Queryable, hash: string): Promise<Principal | undefined> {
  const row = await findActiveKeyByHash(db, hash);
  return row
    ? { keyId: row.id, accountId: row.account_id, plan: row.plan, scope: row.scope, limit: PLANS[row.plan] }
    : undefined;
}
