import crypto from 'node:crypto';
import type { Queryable } from './types.js';

/**
 * The deployment's id key (migrations/0006_id_key.sql): made by the first process that starts
 * and finds none. The insert is one statement that does nothing on conflict, so processes that
 * start together all read back the same key.
 */
/**
 * A key of its own for one `purpose`, derived from the deployment's key (HKDF-SHA256), so no
 * two uses share a key: the id permutation keeps the key itself; sealed idempotent answers
 * (src/http/idempotency.ts) use one derived from it.
 */
export function deriveKey(deploymentKey: Buffer, purpose: string, bytes = 32): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', deploymentKey, Buffer.alloc(0), `pricehound ${purpose}`, bytes));
}

export async function loadIdKey(db: Queryable): Promise<Buffer> {
  await db.query(`/* createIdKey */ insert into id_key (key) values ($1) on conflict do nothing`, [
    crypto.randomBytes(16).toString('hex'),
  ]);
  const r = await db.query<{ key: string }>(`/* loadIdKey */ select key from id_key`);
  const key = r.rows[0]?.key;
  if (!key) throw new Error('id_key has no row');
  return Buffer.from(key, 'hex');
}
