import http from 'node:http';
import { UnknownAccountError } from '../auth/service.js';
import type { ErrorDetail } from '../http/errors.js';
import type { RollupResult } from '../prices/service.js';
import type { ApiAnswer, CreatedKeyView, KeyView, OwnerOperations } from './operations.js';

/** The owner channel could not be reached at all (nothing listening, or the socket file is missing). */
export class OwnerChannelUnreachableError extends Error {
  constructor(
    readonly socketPath: string,
    readonly code: string,
  ) {
    super(`owner channel ${socketPath} unreachable (${code})`);
    this.name = 'OwnerChannelUnreachableError';
  }
}

/**
 * The server answered with an error we have no better mapping for. `code` and `requestId` come
 * from its error body (the HTTP API's shape); the message names the fields `details` lists.
 */
export class OwnerChannelRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'OwnerChannelRequestError';
  }
}

const TIMEOUT_MS = 120_000;

type Answer = { status: number; body: Record<string, unknown> };

function request(socketPath: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        method,
        path,
        agent: false,
        timeout: TIMEOUT_MS,
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            });
          } catch {
            reject(
              new OwnerChannelRequestError(
                res.statusCode ?? 0,
                'invalid_response',
                `the owner channel answered ${res.statusCode} with a body that is not JSON`,
              ),
            );
          }
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`the server did not answer on its owner channel within ${TIMEOUT_MS / 1000} s`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Refused or missing before anything was sent: the caller may retry or fall back.
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
        reject(new OwnerChannelUnreachableError(socketPath, err.code));
      else reject(err);
    });
    req.end(payload);
  });
}

const isDetail = (d: unknown): d is ErrorDetail =>
  typeof d === 'object' &&
  d !== null &&
  typeof (d as ErrorDetail).field === 'string' &&
  typeof (d as ErrorDetail).message === 'string';

/** The fields an error body's `details` names. */
const detailsOf = (r: Answer): ErrorDetail[] => (Array.isArray(r.body.details) ? r.body.details.filter(isDetail) : []);

function fail(r: Answer): never {
  const b = r.body;
  const code = typeof b.code === 'string' ? b.code : 'unknown';
  const text = typeof b.error === 'string' ? b.error : `the request failed with status ${r.status}`;
  const details = detailsOf(r);
  const message = details.length > 0 ? `${text}: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}` : text;
  throw new OwnerChannelRequestError(
    r.status,
    code,
    message,
    typeof b.request_id === 'string' ? b.request_id : undefined,
  );
}

/** The 404 of POST /keys for an account that does not exist. */
const unknownAccount = (r: Answer) =>
  r.status === 404 && r.body.code === 'not_found' && detailsOf(r).some((d) => d.field === 'account_id');

/** OwnerOperations carried out by the server process that owns DATA_DIR, through its owner channel (./server.ts). */
export function channelOperations(socketPath: string, pid: number): OwnerOperations {
  return {
    via: { kind: 'socket', pid, socket: socketPath },
    async createKey(input) {
      const r = await request(socketPath, 'POST', '/keys', {
        plan: input.plan,
        scope: input.scope ?? 'full',
        name: input.name ?? null,
        account_id: input.accountId ?? null,
      });
      if (r.status === 201) return r.body as unknown as CreatedKeyView;
      if (unknownAccount(r)) throw new UnknownAccountError(input.accountId ?? '');
      fail(r);
    },
    async listKeys(accountId) {
      const r = await request(
        socketPath,
        'GET',
        accountId ? `/keys?account_id=${encodeURIComponent(accountId)}` : '/keys',
      );
      if (r.status === 200) return r.body.data as KeyView[];
      fail(r);
    },
    async revokeKey(id) {
      const r = await request(socketPath, 'POST', `/keys/${encodeURIComponent(id)}/revoke`);
      if (r.status === 200) return r.body as unknown as KeyView;
      if (r.status === 404 && r.body.code === 'not_found') return undefined;
      fail(r);
    },
    async rollupPrices(input) {
      const r = await request(socketPath, 'POST', '/prices/rollup', {
        older_than_days: input.olderThanDays,
        after: input.after ?? null,
      });
      if (r.status === 200) return r.body as unknown as RollupResult;
      fail(r);
    },
    async migrate() {
      const r = await request(socketPath, 'POST', '/migrate');
      if (r.status === 200) return r.body.applied as string[];
      fail(r);
    },
    async api(apiRequest) {
      const r = await request(socketPath, 'POST', '/api', apiRequest);
      if (r.status === 200) return r.body as unknown as ApiAnswer;
      fail(r);
    },
    async close() {},
  };
}

/** The pid of the server answering on `socketPath`; OwnerChannelUnreachableError when nothing listens there. */
export async function probeOwnerChannel(socketPath: string): Promise<{ pid: number }> {
  const r = await request(socketPath, 'GET', '/status');
  if (r.status === 200 && typeof r.body.pid === 'number') return { pid: r.body.pid };
  fail(r);
}
