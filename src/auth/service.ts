import type { Database } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { iso } from '../http/fields.js';
import type { KeyResolver } from './key-cache.js';
import { createKey, type Principal, SHOWN_PREFIX_LENGTH } from './keys.js';
import { type Plan, PLANS } from './plans.js';
import type { ApiKeyCreate, ApiKeyJson } from './schemas.js';
import type { Scope } from './scopes.js';
import {
  getAccountKey,
  type KeyRow,
  lockAccount,
  notifyRevoked,
  otherActiveFullKeys,
  renameAccountKey,
  revokeAccountKey,
} from './sql.js';

/**
 * API keys over HTTP (design/API.md "API keys over HTTP"): an account's keys managed by its own
 * full keys. The rules live here; the routes only turn results into HTTP. The operator's CLI
 * (src/auth/keys.ts) keeps its own, wider powers: any account, no lock-out rule.
 */

/** A key as the API shows it: its `prefix` is the first 12 characters of the secret. */
export function toApiKey(
  r: KeyRow,
  lastUsed: (keyId: string, stored: Date | null) => Date | null = (_, d) => d,
): ApiKeyJson {
  const used = lastUsed(r.id, r.last_used_at);
  return {
    id: r.id,
    object: 'api_key',
    name: r.name,
    scope: r.scope,
    plan: r.plan,
    prefix: r.key_prefix.slice(0, SHOWN_PREFIX_LENGTH),
    created_at: iso(r.created_at),
    last_used_at: used ? iso(used) : null,
    revoked_at: r.revoked_at ? iso(r.revoked_at) : null,
  };
}

/** A plan allows more requests than another: the order free < starter < business. */
const above = (a: Plan, b: Plan) => PLANS[a] > PLANS[b];

/**
 * Makes a key in the caller's account: its plan at most the caller's (the default), its scope
 * `full` unless asked otherwise. The secret is in the answer and nowhere else.
 */
export async function createAccountKey(
  db: Database,
  caller: Principal,
  body: ApiKeyCreate,
): Promise<KeyRow & { key: string }> {
  const plan = (body.plan as Plan | undefined) ?? caller.plan;
  if (above(plan, caller.plan)) throw ERRORS.planAboveKey(plan, caller.plan);
  return createKey(db, {
    plan,
    scope: (body.scope as Scope | undefined) ?? 'full',
    name: body.name ?? null,
    accountId: caller.accountId,
  });
}

export async function findAccountKey(db: Database, accountId: string, id: string): Promise<KeyRow> {
  const row = await getAccountKey(db, accountId, id);
  if (!row) throw ERRORS.notFound('API key');
  return row;
}

/** Renames a key of the account (revoked or not: the label is history too); `undefined` keeps the name. */
export async function renameKey(
  db: Database,
  accountId: string,
  id: string,
  name: string | null | undefined,
): Promise<KeyRow> {
  const row =
    name === undefined ? await getAccountKey(db, accountId, id) : await renameAccountKey(db, accountId, id, name);
  if (!row) throw ERRORS.notFound('API key');
  return row;
}

/**
 * Revokes a key of the account, refused with a 409 when it is the account's last unrevoked full
 * key: without one nobody could manage the account's keys over HTTP again (no lock-out).
 * Revocations of one account take turns on the account's row, so two of them cannot each leave
 * the other as the last. Revoking a revoked key answers it unchanged.
 *
 * The NOTIFY drops the key from every process's cache at commit (src/auth/key-cache.ts); this
 * process drops it at once as well, so the very next request here is refused whether or not the
 * notification has come back yet.
 */
export async function revokeKeyOfAccount(
  db: Database,
  keys: KeyResolver,
  accountId: string,
  id: string,
): Promise<KeyRow> {
  const row = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const current = await getAccountKey(tx, accountId, id);
    if (!current) throw ERRORS.notFound('API key');
    if (current.revoked_at) return current;
    if (current.scope === 'full' && (await otherActiveFullKeys(tx, accountId, id)) === 0) {
      throw ERRORS.conflict(
        "This is the account's last full key that is not revoked: make another full key first, then revoke this one",
      );
    }
    const revoked = (await revokeAccountKey(tx, accountId, id))!;
    await notifyRevoked(tx, id);
    return revoked;
  });
  keys.evict(id);
  return row;
}

/** What other areas (the document, the owner channel, usage) use of keys, plans and scopes. */
export { createKey, listKeys, revokeKey, UnknownAccountError, type ApiKey } from './keys.js';
export { describePlans, isPlan, PLAN_NAMES, type Plan } from './plans.js';
export { isScope, requiredScope, SCOPES, type Scope } from './scopes.js';
