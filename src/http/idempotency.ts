import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { deriveKey } from '../db/id-key.js';
import { firstMissing } from '../db/ownership.js';
import type { Database } from '../db/types.js';
import { ERRORS } from './errors.js';

/**
 * `Idempotency-Key` on POST (spec part 8 rule 4, "retry with exponential waits"). The first
 * request with a key claims it before the handler runs and stores its response before that
 * response is sent; a retry with the same key and body within 24 hours gets the stored
 * response (marked `Idempotent-Replayed: true`). The same key with another body, or while the
 * first request is still running, is a 409 (with Retry-After in the second case). 5xx results,
 * and answers that ask to be retried (Retry-After), are not stored, so they can be retried.
 * Requests that fail validation (422, whether from the schema or from the handler) are not stored
 * either, so the corrected request can reuse its key.
 *
 * Stored answers are sealed (AES-256-GCM, with a key derived from the deployment's key, bound to
 * their account and key), so the store holds no secret in plaintext: the answers of webhook
 * create and rotate-secret carry one. A replay of a success first checks that the resources the
 * answer is about still exist (the ids of the path, and the `Location` of a create): one that
 * was deleted since is its own 404, and the sealed answer is dropped (docs/API-DECISIONS.md).
 */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** A claim older than this with no stored response belongs to a request that died. */
const ABANDONED_AFTER_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST routes that honour Idempotency-Key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotencyKey?: string;
  }
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(request: FastifyRequest): string {
  // /v1/x and /api/v1/x are one endpoint.
  const path = (request.url.split('?')[0] ?? '').replace(/^\/api(?=\/v1\/)/, '');
  return crypto
    .createHash('sha256')
    .update(`${request.method} ${path}\n${stable(request.body)}`)
    .digest('hex');
}

const SEALED = 'sealed:v1:';

/** Seals and opens stored answers; `row` (account and key) is authenticated with each. */
function answerSeal(deploymentKey: Buffer) {
  const key = deriveKey(deploymentKey, 'idempotency answers');
  return {
    seal(text: string, row: string): string {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(row));
      const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return SEALED + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
    },
    /** The answer, or undefined when it does not open. Answers stored before sealing (at most a day old) are as they were. */
    open(stored: string, row: string): string | undefined {
      if (!stored.startsWith(SEALED)) return stored;
      const raw = Buffer.from(stored.slice(SEALED.length), 'base64');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(Buffer.from(row));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/** The ids a stored answer is about: the request path's, and the created resource's (its `Location`). */
function answeredIds(request: FastifyRequest, headers: Record<string, string> | null): string[] {
  const ids = Object.values((request.params ?? {}) as Record<string, unknown>);
  ids.push(headers?.Location?.split('/').pop());
  return ids.filter((id): id is string => typeof id === 'string');
}

interface Stored {
  fingerprint: string;
  status: number | null;
  body: string | null;
  headers: Record<string, string> | null;
  created_at: Date;
}

/**
 * Adds the claim (preHandler) and the store (onSend) to the routes marked `idempotent`, ahead of
 * their own hooks; other routes run neither, so a GET pays nothing for them.
 */
export function registerIdempotency(app: FastifyInstance, db: Database, deploymentKey: Buffer) {
  const sealing = answerSeal(deploymentKey);
  const rowOf = (accountId: string, key: string) => `${accountId}\n${key}`;
  const claim: preHandlerAsyncHookHandler = async (request, reply) => {
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!key || !KEY_PATTERN.test(key)) {
      throw ERRORS.validation(
        [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
        'Invalid Idempotency-Key header',
      );
    }
    const accountId = request.principal.accountId;
    const fp = fingerprint(request);
    const claimed = await db.query(
      `/* claimIdempotencyKey */ insert into idempotency_keys (account_id, key, fingerprint) values ($1, $2, $3)
       on conflict (account_id, key) do update
         set fingerprint = excluded.fingerprint, status = null, body = null, headers = null, created_at = now()
         where idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'
            or (idempotency_keys.status is null and idempotency_keys.created_at < now() - $4::interval)
       returning key`,
      [accountId, key, fp, `${ABANDONED_AFTER_MS} milliseconds`],
    );
    if (claimed.rows.length > 0) {
      request.idempotencyKey = key;
      return;
    }
    const found = await db.query<Stored>(
      '/* readIdempotencyKey */ select fingerprint, status, body, headers, created_at from idempotency_keys where account_id = $1 and key = $2',
      [accountId, key],
    );
    const stored = found.rows[0];
    if (!stored) throw ERRORS.inProgress('The Idempotency-Key is being reused concurrently; retry', 1);
    if (stored.fingerprint !== fp) {
      throw ERRORS.conflict('This Idempotency-Key was already used with a different request', [
        { field: 'Idempotency-Key', message: 'was used for another method, path or body' },
      ]);
    }
    if (stored.status === null) {
      // Ends by itself: a client that retried before its first attempt was answered (its own
      // timeout) waits a second and gets that first answer.
      throw ERRORS.inProgress('A request with this Idempotency-Key is still being processed; retry later', 1);
    }
    if (stored.status < 300) {
      const gone = await firstMissing(db, accountId, answeredIds(request, stored.headers));
      if (gone !== undefined) {
        await db.query(
          `/* dropIdempotentAnswer */ update idempotency_keys set body = null where account_id = $1 and key = $2`,
          [accountId, key],
        );
        throw ERRORS.notFound(gone, [
          { field: 'Idempotency-Key', message: 'its stored answer is about a resource that no longer exists' },
        ]);
      }
    }
    const body = stored.body === null ? '' : sealing.open(stored.body, rowOf(accountId, key));
    if (body === undefined) {
      throw ERRORS.conflict(
        'The answer stored for this Idempotency-Key cannot be read; send the request with a new key',
        [{ field: 'Idempotency-Key', message: "has a stored answer that does not open with this deployment's key" }],
      );
    }
    reply.headers({
      ...(stored.headers ?? {}),
      'Idempotent-Replayed': 'true',
      'Content-Type': 'application/json; charset=utf-8',
    });
    return reply.code(stored.status).send(body);
  };

  const store: onSendHookHandler = async (request, reply, payload) => {
    const key = request.idempotencyKey;
    if (!key) return payload;
    request.idempotencyKey = undefined;
    const accountId = request.principal.accountId;
    // 5xx: may be retried. 422: nothing was done and the request must change to succeed, so
    // the fixed request may reuse the key (an atomic batch refuses its items in the handler).
    // An answer with Retry-After (a listing being checked: a 409 that ends by itself) is not the
    // request's outcome either: the retry it asks for must run, not replay it.
    if (reply.statusCode >= 500 || reply.statusCode === 422 || reply.getHeader('retry-after') !== undefined) {
      await db.query('/* releaseIdempotencyKey */ delete from idempotency_keys where account_id = $1 and key = $2', [
        accountId,
        key,
      ]);
      return payload;
    }
    const location = reply.getHeader('location');
    await db.query(
      '/* storeIdempotentAnswer */ update idempotency_keys set status = $3, body = $4, headers = $5 where account_id = $1 and key = $2',
      [
        accountId,
        key,
        reply.statusCode,
        sealing.seal(typeof payload === 'string' ? payload : '', rowOf(accountId, key)),
        JSON.stringify(location ? { Location: String(location) } : {}),
      ],
    );
    return payload;
  };

  const list = <T>(hooks: T | T[] | undefined): T[] =>
    hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [claim, ...list(route.preHandler)];
    route.onSend = [store, ...list(route.onSend)];
  });
}

export async function deleteExpiredIdempotencyKeys(db: Database): Promise<number> {
  const r = await db.query(
    `/* deleteExpiredIdempotencyKeys */ delete from idempotency_keys where created_at < now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'`,
  );
  return r.rowCount;
}
