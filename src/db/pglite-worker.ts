/**
 * The embedded engine's own thread (started by src/db/pglite.ts). PGlite runs PostgreSQL as
 * WebAssembly synchronously on the thread that calls it, so on the main thread every query
 * stopped all HTTP work for as long as it ran. Here it stops nothing but this thread.
 *
 * Its calls (src/threads): query, exec (inside transaction `tx` when given); begin, answered
 * with a transaction id once it holds the engine; end, answered when PGlite has committed or
 * rolled back; listen, answered with a subscription id whose payloads come as notifications
 * on that channel; unlisten; close. Errors keep their code, constraint, detail, ...
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction, types } from '@electric-sql/pglite';
import { serializeError } from '../threads/protocol.js';
import { notifyParent, serveThread } from '../threads/serve.js';
import { asEngineError } from './pglite-errors.js';
import { PreparedStatements } from './pglite-prepared.js';

export interface EngineMethods {
  query(a: { sql: string; params?: unknown[]; tx?: number }): Promise<{ rows: unknown[]; rowCount: number }>;
  exec(a: { sql: string; tx?: number }): Promise<void>;
  begin(): Promise<number>;
  end(a: { tx: number; commit: boolean }): Promise<void>;
  listen(a: { channel: string }): Promise<number>;
  unlisten(a: { sub: number }): Promise<void>;
  close(): Promise<void>;
}

/**
 * What the engine starts with. `sharedBuffersMb`: PostgreSQL's shared_buffers (default 128,
 * PGlite's own): the engine clears the whole cache at every start, ~0.3 CPU-s at 128 MiB, and
 * a small host or the test suite (which opens hundreds of databases) may want less.
 */
export interface EngineOptions {
  sharedBuffersMb?: number;
}

export interface EngineData {
  dir: string;
  wasmModule: WebAssembly.Module;
  opts: EngineOptions;
}

class RollbackRequested extends Error {}

// The engine's file system errors are objects, not Errors ({ name: 'ErrnoError', errno }), and
// some surface as rejections nobody awaits (a write behind a query): they end this thread.
// Thrown again as an Error naming the errno, so the parent's message says what happened.
process.on('unhandledRejection', (reason) => {
  throw asEngineError(reason);
});

async function openEngine({ dir, wasmModule, opts }: EngineData): Promise<EngineMethods> {
  const pg = await PGlite.create(dir, {
    pgliteWasmModule: wasmModule,
    startParams: [
      ...PGlite.defaultStartParams,
      ...(opts.sharedBuffersMb === undefined ? [] : ['-c', `shared_buffers=${opts.sharedBuffersMb}MB`]),
    ],
    parsers: { [types.INT8]: (v: string) => Number(v), [types.NUMERIC]: (v: string) => v },
  });
  const prepared = new PreparedStatements(pg);
  const txs = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>();
  /** `end` calls waiting for their transaction to finish, by transaction id. */
  const ending = new Map<number, { resolve: () => void; reject: (err: unknown) => void }>();
  const subs = new Map<number, () => Promise<void>>();
  let nextTx = 1;
  let nextSub = 1;

  const target = (tx: number | undefined): Pick<PGlite, 'query' | 'exec'> => {
    if (tx === undefined) return pg;
    const t = txs.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return t.tx;
  };

  const settle = (txId: number, err: unknown): void => {
    txs.delete(txId);
    const waiting = ending.get(txId);
    ending.delete(txId);
    if (waiting === undefined) return;
    if (err === undefined) waiting.resolve();
    else waiting.reject(err);
  };

  return {
    async query({ sql, params, tx }) {
      const t = target(tx); // throws for a transaction that is not open
      // Parameterised statements run prepared (parsed and planned once); the rest as before.
      const r =
        params && params.length > 0 && prepared.accepts(sql)
          ? await prepared.query(sql, params, tx !== undefined)
          : await t.query(sql, params);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
    async exec({ sql, tx }) {
      await target(tx).exec(sql);
    },
    begin() {
      const txId = nextTx++;
      // Answered from inside the callback: the transaction holds the engine until `end`.
      return new Promise<number>((answer) => {
        pg.transaction(
          (tx) =>
            new Promise<void>((resolve, reject) => {
              txs.set(txId, { tx, end: (commit) => (commit ? resolve() : reject(new RollbackRequested())) });
              answer(txId);
            }),
        ).then(
          () => settle(txId, undefined),
          (err: unknown) => settle(txId, err instanceof RollbackRequested ? undefined : err),
        );
      });
    },
    async end({ tx, commit }) {
      const t = txs.get(tx);
      if (!t) throw new Error(`transaction ${tx} is not open`);
      await new Promise<void>((resolve, reject) => {
        ending.set(tx, { resolve, reject });
        t.end(commit);
      });
    },
    async listen({ channel }) {
      const sub = nextSub++;
      subs.set(sub, await pg.listen(channel, (payload) => notifyParent(sub, payload)));
      return sub;
    },
    async unlisten({ sub }) {
      const unsub = subs.get(sub);
      subs.delete(sub);
      await unsub?.();
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}

if (parentPort) {
  await serveThread(openEngine(workerData as EngineData), {
    closeAfter: 'close',
    serializeError: (err) => serializeError(asEngineError(err)),
  });
}
