import http from 'node:http';
import { UnknownAccountError } from '../auth/keys.js';
import type { RollupResult } from '../prices/rollup/index.js';
import type { OwnerOperations, CreatedKeyView, KeyView } from './operations.js';

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

/** The server answered with an error we have no better mapping for. */
export class OwnerChannelRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'OwnerChannelRequestError';
  }
}

const TIMEOUT_MS = 120_000;

function request(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        method,
        path,
        agent: false,
        timeout: TIMEOUT_MS,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
          } catch {
            reject(new OwnerChannelRequestError(res.statusCode ?? 0, 'invalid_response', `the owner channel answered ${res.statusCode} with a body that is not JSON`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`the server did not answer on its owner channel within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Refused or missing before anything was sent: the caller may retry or fall back.
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new OwnerChannelUnreachableError(socketPath, err.code));
      else reject(err);
    });
    req.end(payload);
  });
}

function fail(r: { status: number; body: Record<string, unknown> }): never {
  const code = typeof r.body.code === 'string' ? r.body.code : 'unknown';
  const message = typeof r.body.error === 'string' ? r.body.error : `the request failed with status ${r.status}`;
  throw new OwnerChannelRequestError(r.status, code, message);
}

/** OwnerOperations carried out by the server process that owns DATA_DIR, through its owner channel (./server.ts). */
export function channelOperations(socketPath: string, pid: number): OwnerOperations {
  return {
    via: { kind: 'socket', pid, socket: socketPath },
    async createKey(input) {
      const r = await request(socketPath, 'POST', '/keys', { plan: input.plan, name: input.name ?? null, account_id: input.accountId ?? null });
      if (r.status === 201) return r.body as unknown as CreatedKeyView;
      if (r.status === 404 && r.body.code === 'unknown_account') throw new UnknownAccountError(input.accountId ?? '');
      fail(r);
    },
    async listKeys(accountId) {
      const r = await request(socketPath, 'GET', accountId ? `/keys?account_id=${encodeURIComponent(accountId)}` : '/keys');
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
      const r = await request(socketPath, 'POST', '/prices/rollup', { older_than_days: input.olderThanDays, after: input.after ?? null });
      if (r.status === 200) return r.body as unknown as RollupResult;
      fail(r);
    },
    async migrate() {
      const r = await request(socketPath, 'POST', '/migrate');
      if (r.status === 200) return r.body.applied as string[];
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
