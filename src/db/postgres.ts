import crypto from 'node:crypto';
import pg from 'pg';
import type { Database, Queryable, QueryResult } from './types.js';
import { DatabaseUnavailableError } from './types.js';

const INT8 = 20;
const NUMERIC = 1700;

// Same JS types as the PGlite implementation: int8 as a number, numeric as exact text.
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === NUMERIC) return (v: string) => v;
    return pg.types.getTypeParser(oid, format);
  },
};

/** Distinct parameterised statement texts prepared per pool (see `run` below). */
const MAX_PREPARED = 500;

export interface PostgresOptions {
  poolSize?: number;
  /** Called with errors of idle pooled connections (the pool replaces them). */
  onIdleError?: (err: Error) => void;
  applicationName?: string;
  /** Do not fail when the server cannot be reached now (a read replica: its reads fall back to the primary). */
  lazy?: boolean;
}

/** A pooled connection to a PostgreSQL server (15 or newer). */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    types: typeParsers,
    connectionTimeoutMillis: 5_000,
    // A new connection plans each statement afresh: the trends statement's first run on one took
    // 77-79 ms at 50.5 M observations and its next five (custom plans) 33-47 ms, against ~11 ms
    // once PostgreSQL keeps the generic plan (docs/BENCHMARKS.md, "Connections kept"). Closing
    // idle connections after 30 s meant a shop's dashboard, a request a minute, paid that on
    // every visit; after 10 minutes of quiet they are still closed, their memory returned.
    idleTimeoutMillis: 600_000,
    application_name: opts.applicationName ?? 'pricehound',
    // No JIT compilation (a startup parameter: no extra round trip). The planner's estimates for
    // the history statement (CTEs, generate_series, branches never run) pass jit_above_cost, and
    // compiling it costs more than running it (docs/BENCHMARKS.md, "Daily aggregates"); every
    // statement here is short. A pooler in front must pass `options` (PgBouncer:
    // ignore_startup_parameters = options drops it instead; then set jit = off for the role).
    options: '-c jit=off',
  });
  pool.on('error', (err) => opts.onIdleError?.(err));

  // Parameterised statements are prepared once per connection (a named statement): afterwards a
  // query sends only Bind/Execute and PostgreSQL skips parsing and planning. For the API's point
  // SELECT that more than halved PostgreSQL's CPU per request (docs/BENCHMARKS.md). Up to
  // MAX_PREPARED distinct texts are prepared; any beyond run unnamed, as do statements without
  // parameters (exec, several statements). A pooler in front of PostgreSQL must keep prepared
  // statements per server connection (PgBouncer: session mode, or 1.21+ with
  // max_prepared_statements).
  const names = new Map<string, string | null>();
  const statementName = (sql: string): string | undefined => {
    let name = names.get(sql);
    if (name === undefined) {
      if (names.size >= MAX_PREPARED) return undefined;
      name = `ph_${crypto.createHash('sha1').update(sql).digest('base64url')}`;
      names.set(sql, name);
    }
    return name ?? undefined;
  };

  const run = async <T>(
    client: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<T>> => {
    const values = params as unknown[] | undefined;
    const name = values ? statementName(sql) : undefined;
    try {
      const r = name ? await client.query({ name, text: sql, values }) : await client.query(sql, values);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    } catch (err) {
      // A schema change under a prepared statement (e.g. another process migrated) that changes
      // its result type fails it for good on that connection: stop preparing this text, and
      // outside a transaction retry it unnamed.
      if (name && (err as { code?: string }).code === '0A000' && /cached plan/.test((err as Error).message)) {
        names.set(sql, null);
        if (client === pool) return run(client, sql, params);
      }
      throw asUnavailable(err);
    }
  };
  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => ({
    query: (sql, params) => run(client, sql, params),
    async exec(sql) {
      try {
        await client.query(sql); // several statements: pg answers with an array of results
      } catch (err) {
        throw asUnavailable(err);
      }
    },
  });

  // Fail fast on a bad URL or an unreachable server rather than on the first request.
  if (!opts.lazy) await run(pool, '/* ping */ select 1');

  const base = wrap(pool);
  const listeners = new Set<pg.Client>();
  let closed = false;

  return {
    kind: 'postgres',
    query: base.query,
    bulkQuery: base.query,
    exec: base.exec,
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw asUnavailable(err);
      }
      let broken: Error | undefined;
      // A checked-out connection that drops between two statements (the server restarted, the
      // network cut) emits 'error' with no query to reject: without a listener that ended the
      // process (test/faults/database-outage.test.ts). The statement that follows fails with
      // the same cause and the connection is discarded at release.
      const dropped = (err: Error) => {
        broken = err;
      };
      client.on('error', dropped);
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackErr) {
          broken = rollbackErr as Error;
        }
        throw asUnavailable(err);
      } finally {
        client.removeListener('error', dropped);
        client.release(broken);
      }
    },
    async listen(channel, onMessage, onLost) {
      // A dedicated connection per channel, re-established with backoff when it drops. Whatever
      // was announced while it was down is lost, so `onLost` runs when it drops and again once
      // it listens anew (callers drop what they cached in between).
      let client: pg.Client | undefined;
      let stopped = false;
      let attempt = 0;
      const retry = () => {
        if (stopped || closed) return;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(attempt++, 7));
        setTimeout(() => void connect(true), delay).unref();
      };
      const connect = async (isRetry: boolean): Promise<void> => {
        if (stopped || closed) return;
        const c = new pg.Client({
          connectionString: url,
          application_name: `${opts.applicationName ?? 'pricehound'}-listen`,
        });
        c.on('notification', (msg) => {
          if (msg.channel === channel) onMessage(msg.payload ?? '');
        });
        c.on('error', () => undefined);
        c.on('end', () => {
          listeners.delete(c);
          if (client !== c) return;
          client = undefined;
          if (stopped || closed) return;
          onLost?.();
          retry();
        });
        try {
          await c.connect();
          await c.query(`/* listenChannel */ LISTEN ${pg.Client.prototype.escapeIdentifier(channel)}`);
        } catch (err) {
          await c.end().catch(() => undefined);
          if (!isRetry) throw err;
          retry();
          return;
        }
        attempt = 0;
        client = c;
        listeners.add(c);
        if (isRetry) onLost?.();
      };
      await connect(false);
      return async () => {
        stopped = true;
        if (client) await client.end().catch(() => undefined);
      };
    },
    async ping() {
      await run(pool, '/* ping */ select 1');
    },
    async close() {
      // Idempotent like the PGlite implementation: shutdown paths may close twice.
      if (closed) return;
      closed = true;
      await Promise.all([...listeners].map((c) => c.end().catch(() => undefined)));
      await pool.end();
    },
  };
}

function asUnavailable(err: unknown): unknown {
  const e = err as { code?: string; message?: string } | null;
  if (e && typeof e.code === 'string' && /^(ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH)/.test(e.code)) {
    return new DatabaseUnavailableError(`database unreachable (${e.code})`, { cause: err });
  }
  if (e && /timeout exceeded when trying to connect|Connection terminated/i.test(e.message ?? '')) {
    return new DatabaseUnavailableError('database unreachable', { cause: err });
  }
  return err;
}
