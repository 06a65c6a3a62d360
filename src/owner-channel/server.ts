import fs from 'node:fs';
import http from 'node:http';
import type { Logger } from 'pino';
import { UnknownAccountError } from '../auth/service.js';
import { isPlan, isScope, PLAN_NAMES, SCOPES } from '../auth/service.js';
import { ApiError, errorBody, ERRORS } from '../http/errors.js';
import { genReqId } from '../http/request-id.js';
import type { OwnerOperations } from './operations.js';

/**
 * The owner channel: a small internal HTTP API on a Unix socket (mode 0600, so only the user
 * running the server can use it), served by the process that owns an embedded DATA_DIR. PGlite
 * lets one process open a DATA_DIR, so this is how `pricehound keys ...` and `pricehound
 * migrate` reach the database while the server runs. Not part of the public API.
 *
 *   GET  /status                -> 200 {"pid": N}
 *   GET  /keys[?account_id=ID]  -> 200 {"data": [KeyView]}
 *   POST /keys {plan, name?, account_id?} -> 201 CreatedKeyView | 404 not_found, details naming account_id
 *   POST /keys/ID/revoke        -> 200 KeyView | 404 not_found
 *   POST /migrate               -> 200 {"applied": [name]}
 *   POST /prices/rollup {older_than_days, after?} -> 200 RollupResult (src/prices/rollup)
 *   POST /api {method, url, key, body?, headers?} -> 200 {status, headers, body}: one request to
 *        the public HTTP API made in this process, with that API key (its answer, whatever its
 *        status, is the body of our 200)
 * Errors have the HTTP API's body, {"error", "status", "code", "details"?, "request_id"}, made by
 * the same function from the same vocabulary (src/http/errors.ts); every answer carries its
 * request id in X-Request-Id, and the log lines of the request carry it too.
 */
export interface OwnerChannelServer {
  readonly socketPath: string;
  /** Stops accepting, waits for requests in progress, removes the socket file. Idempotent. */
  close(): Promise<void>;
  /** Cuts the connections still open (after a shutdown timeout). */
  closeAllConnections(): void;
}

const MAX_BODY = 64 * 1024;
/** An /api request carries a whole batch (1000 products, 1000 observations). */
const MAX_API_BODY = 32 * 1024 * 1024;
const API_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

async function readJson(req: http.IncomingMessage, limit = MAX_BODY): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Read to the end even past the limit: leaving the loop early destroys the socket, and the
  // 413 with it.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) throw ERRORS.payloadTooLarge(limit);
  if (size === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw ERRORS.invalidJson();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw ERRORS.invalidRequest('The request body must be a JSON object');
  return body as Record<string, unknown>;
}

const invalidField = (field: string, message: string) => ERRORS.validation([{ field, message }]);

function optionalString(body: Record<string, unknown>, field: string): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length === 0 || v.length > 200)
    throw invalidField(field, 'must be a non-empty string of at most 200 characters');
  return v;
}

async function route(
  ops: OwnerOperations,
  log: Logger,
  req: http.IncomingMessage,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(req.url ?? '/', 'http://owner');
  const method = req.method ?? 'GET';

  if (url.pathname === '/status' && method === 'GET') {
    return { status: 200, body: { pid: process.pid } };
  }
  if (url.pathname === '/keys' && method === 'GET') {
    const account = url.searchParams.get('account_id') ?? undefined;
    return { status: 200, body: { data: await ops.listKeys(account) } };
  }
  if (url.pathname === '/keys' && method === 'POST') {
    const body = await readJson(req);
    if (!isPlan(body.plan)) throw invalidField('plan', `must be one of ${PLAN_NAMES.join(', ')}`);
    const scope = body.scope ?? 'full';
    if (!isScope(scope)) throw invalidField('scope', `must be one of ${SCOPES.join(', ')}`);
    try {
      const created = await ops.createKey({
        plan: body.plan,
        scope,
        name: optionalString(body, 'name'),
        accountId: optionalString(body, 'account_id'),
      });
      log.info(
        { key_id: created.id, account_id: created.account_id, plan: created.plan, scope: created.scope },
        'owner channel: api key created',
      );
      return { status: 201, body: created };
    } catch (err) {
      if (err instanceof UnknownAccountError) {
        throw ERRORS.notFound(`Account ${err.accountId}`, [
          { field: 'account_id', message: 'is not an existing account' },
        ]);
      }
      throw err;
    }
  }
  const revoke = /^\/keys\/([^/]+)\/revoke$/.exec(url.pathname);
  if (revoke && method === 'POST') {
    const id = decodeURIComponent(revoke[1]!);
    const key = await ops.revokeKey(id);
    if (!key) throw ERRORS.notFound(`API key ${id}`);
    log.info({ key_id: key.id, account_id: key.account_id }, 'owner channel: api key revoked');
    return { status: 200, body: key };
  }
  if (url.pathname === '/prices/rollup' && method === 'POST') {
    const body = await readJson(req);
    const days = body.older_than_days;
    const after = body.after as { productId?: unknown; competitorId?: unknown } | null | undefined;
    if (!Number.isInteger(days) || (days as number) < 1)
      throw invalidField('older_than_days', 'must be a whole number of days, at least 1');
    if (
      after != null &&
      (typeof after.productId !== 'string' || !(typeof after.competitorId === 'string' || after.competitorId === null))
    ) {
      throw invalidField('after', 'must be {productId, competitorId} from a previous answer');
    }
    const result = await ops.rollupPrices({
      olderThanDays: days as number,
      after: after as { productId: string; competitorId: string | null } | null,
    });
    log.info({ ...result, next: undefined }, 'owner channel: price roll-up step done');
    return { status: 200, body: result };
  }
  if (url.pathname === '/api' && method === 'POST') {
    const body = await readJson(req, MAX_API_BODY);
    const apiMethod = API_METHODS.find((m) => m === body.method);
    if (!apiMethod) throw invalidField('method', `must be one of ${API_METHODS.join(', ')}`);
    if (typeof body.url !== 'string' || !body.url.startsWith('/'))
      throw invalidField('url', 'must be a path starting with /');
    if (typeof body.key !== 'string' || body.key === '') throw invalidField('key', 'must be an API key');
    const headers =
      body.headers !== null && typeof body.headers === 'object' ? (body.headers as Record<string, string>) : undefined;
    return {
      status: 200,
      body: await ops.api({ method: apiMethod, url: body.url, key: body.key, body: body.body, headers }),
    };
  }
  if (url.pathname === '/migrate' && method === 'POST') {
    const applied = await ops.migrate();
    if (applied.length > 0) log.info({ applied }, 'owner channel: migrations applied');
    return { status: 200, body: { applied } };
  }
  throw ERRORS.routeNotFound(method, url.pathname);
}

/** A leftover socket file (from a process killed with -9) is removed; anything else is refused. */
function removeStaleSocket(socketPath: string) {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
  fs.rmSync(socketPath, { force: true });
}

/**
 * Listens on `socketPath`. The caller must hold the DATA_DIR lock: that is what makes any
 * socket already at the path stale.
 */
export async function startOwnerChannel(
  ops: OwnerOperations,
  log: Logger,
  socketPath: string,
): Promise<OwnerChannelServer> {
  const channelLog = log.child({ component: 'owner-channel' });
  const server = http.createServer((req, res) => {
    const requestId = genReqId(req);
    const requestLog = channelLog.child({ request_id: requestId });
    route(ops, requestLog, req)
      .catch((err: unknown) => {
        if (err instanceof ApiError) return { status: err.status, body: errorBody(err, requestId) };
        requestLog.error({ err, method: req.method, url: req.url }, 'owner channel request failed');
        // Unlike the public API's, this answer goes to the operator's own command: the cause helps.
        const internal = ERRORS.internal(err instanceof Error ? err.message : String(err));
        return { status: internal.status, body: errorBody(internal, requestId) };
      })
      .then(({ status, body }) => {
        res.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'x-request-id': requestId,
          connection: 'close',
        });
        res.end(JSON.stringify(body));
      });
  });
  server.requestTimeout = 120_000;

  removeStaleSocket(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket is created by bind() inside listen(), synchronously: with this umask it never
    // exists with wider permissions, not even for a moment.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  fs.chmodSync(socketPath, 0o600);
  const removeSocket = () => fs.rmSync(socketPath, { force: true });
  process.once('exit', removeSocket);
  channelLog.debug({ socket: socketPath }, 'owner channel listening');

  let closed: Promise<void> | undefined;
  return {
    socketPath,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }).finally(() => {
        removeSocket();
        process.off('exit', removeSocket);
      });
      return closed;
    },
    closeAllConnections() {
      server.closeAllConnections();
    },
  };
}
