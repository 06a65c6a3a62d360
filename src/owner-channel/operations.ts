import type { ApiKey } from '../auth/service.js';
import type { Plan, Scope } from '../auth/service.js';
import type { RollupResult, SeriesKey } from '../prices/service.js';

/**
 * What the CLI's commands do to the database (API keys, migrations, price roll-up), as one
 * interface with two implementations: in this process on a database it opened (./local.ts), or
 * through the owner channel of the server process that owns an embedded DATA_DIR (./client.ts,
 * served by ./server.ts). The CLI does not care which.
 */
export interface OwnerOperations {
  createKey(input: CreateKeyInput): Promise<CreatedKeyView>;
  listKeys(accountId?: string): Promise<KeyView[]>;
  /** The revoked key, or undefined when there is no such key. Revoking twice is harmless. */
  revokeKey(id: string): Promise<KeyView | undefined>;
  /**
   * Rolls up price observations older than `olderThanDays` (docs/prices/HISTORY.md), for a
   * bounded time per call: call again with `after` = the result's `next` until that is null.
   */
  rollupPrices(input: { olderThanDays: number; after?: SeriesKey | null }): Promise<RollupResult>;
  /** Applies pending migrations; returns the names applied (empty when up to date). */
  migrate(): Promise<string[]>;
  /**
   * One request to the public HTTP API (/api/v1/...), authenticated by `key` like any client's:
   * the commands that work on an account's data (import, export, demo) go through the same
   * routes, validation and services as the API, in whichever process owns the database.
   */
  api(request: ApiRequest): Promise<ApiAnswer>;
  /** Where the work is done, for messages: this process or the server that owns DATA_DIR. */
  readonly via: { kind: 'direct' } | { kind: 'socket'; pid: number; socket: string };
  close(): Promise<void>;
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path and query under the API root, e.g. '/api/v1/products?limit=100'. */
  url: string;
  /** The API key the request is made with. */
  key: string;
  /** A JSON body. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ApiAnswer {
  status: number;
  /** Lower-case response header names. */
  headers: Record<string, string>;
  body: string;
}

/** Makes API requests in this process (src/app.ts `apiInjector`). */
export type ApiInjector = (request: ApiRequest) => Promise<ApiAnswer>;

export interface CreateKeyInput {
  plan: Plan;
  /** `read`: GETs only (design/API.md "API keys over HTTP"); default `full`. */
  scope?: Scope;
  name?: string | null;
  accountId?: string | null;
}

/** An API key as shown to operators: never the key itself nor its hash. Times are RFC 3339. */
export interface KeyView {
  id: string;
  account_id: string;
  plan: Plan;
  scope: Scope;
  name: string | null;
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/** Returned once, at creation: the only time the key is ever shown. */
export interface CreatedKeyView extends KeyView {
  key: string;
}

export function toKeyView(k: ApiKey): KeyView {
  return {
    id: k.id,
    account_id: k.account_id,
    plan: k.plan,
    scope: k.scope,
    name: k.name,
    key_prefix: k.key_prefix,
    created_at: new Date(k.created_at).toISOString(),
    revoked_at: k.revoked_at ? new Date(k.revoked_at).toISOString() : null,
  };
}
