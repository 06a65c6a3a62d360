import fs from 'node:fs';
import path from 'node:path';
import { ThreadClient } from '../threads/client.js';
import { asEngineError } from './pglite-errors.js';
import type { EngineData, EngineMethods, EngineOptions } from './pglite-worker.js';
import type { Database, Queryable, QueryResult } from './types.js';
import { DatabaseUnavailableError } from './types.js';

/**
 * Embedded PostgreSQL (WASM) persisted in a directory, run on its own worker thread
 * (src/db/pglite-worker.ts) so that a long query does not stop the event loop: other requests
 * keep being read, authenticated and answered while it runs. Still a single connection: PGlite
 * runs one statement at a time and a transaction holds it, so keep transactions short.
 * Only one process may open `dir` (see src/db/data-dir-lock.ts).
 * Results are the same JS types as before: int8 -> number, numeric -> string, timestamptz -> Date.
 */
export async function openPglite(dir: string, opts: EngineOptions = {}): Promise<Database> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return openInWorker(dir, opts);
  // Creating a cluster (initdb) grows the engine's WebAssembly memory to ~850 MiB, and WASM
  // memory never shrinks: a server started on a new DATA_DIR kept that for its whole life. A
  // second worker opening the now-existing directory starts at ~370 MiB, for ~1 s more once.
  const creating = await openInWorker(dir, opts);
  await creating.close();
  return openInWorker(dir, opts);
}

/** How long a bulk query (an export's page) waits for the engine to be free before it runs anyway. */
export const BULK_MAX_WAIT_MS = 250;

let compiled: Promise<WebAssembly.Module> | undefined;

/**
 * The engine's WebAssembly, compiled once per process and handed to every engine thread
 * (a WebAssembly.Module crosses threads without being compiled again). Without it each opening
 * compiled the 9 MB module anew: a server on a new DATA_DIR opens it twice (above), and a
 * process opening many (the test suite's shared processes) paid ~1-2 CPU-s each time.
 */
function engineModule(): Promise<WebAssembly.Module> {
  compiled ??= fs.promises
    .readFile(new URL(import.meta.resolve('@electric-sql/pglite/pglite.wasm')))
    .then((bytes) => WebAssembly.compile(bytes));
  // A failed compilation is not kept: the next opening tries again (and fails as before).
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

async function openInWorker(dir: string, opts: EngineOptions): Promise<Database> {
  const wasmModule = await engineModule();
  const listeners = new Map<number, (payload: string) => void>();
  let closed = false;
  // The engine's thread sits next to this file (src/db/pglite-worker.ts).
  const engine = new ThreadClient<EngineMethods>(new URL('./pglite-worker.js', import.meta.url), {
    name: 'worker',
    workerData: { dir, wasmModule, opts } satisfies EngineData,
    handshake: true,
    failure: (err) => {
      if (closed) return new DatabaseUnavailableError('the embedded database is closed');
      // The thread can end on a value thrown as it is (an engine's errno object): made an Error.
      const cause = asEngineError(err);
      return new DatabaseUnavailableError(`the embedded database stopped: ${cause.message}`, { cause });
    },
    onNotify: (sub, payload) => listeners.get(sub)?.(payload as string),
  });

  try {
    await engine.ready;
  } catch (err) {
    await engine.terminate();
    throw err;
  }

  // Calls in flight other than bulk queries; a transaction counts from begin to end.
  const inFlight = new Set<Promise<unknown>>();
  const tracked = <T>(work: () => Promise<T>): Promise<T> => {
    const p = work();
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return p;
  };
  // Bulk queries run one at a time, each after the calls that were in flight when its turn came
  // (so requests waiting at that moment go first), but not after calls that arrive later: under
  // a steady stream of requests a bulk read still advances, a page per round.
  let bulkTail: Promise<unknown> = Promise.resolve();
  const afterInFlight = () =>
    inFlight.size === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          void Promise.all([...inFlight]).then(() => resolve());
          setTimeout(resolve, BULK_MAX_WAIT_MS).unref();
        });

  const wrap = (tx?: number): Queryable => ({
    query<T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      const call = () =>
        engine.call('query', { sql, params: params as unknown[] | undefined, tx }) as Promise<QueryResult<T>>;
      return tx === undefined ? tracked(call) : call();
    },
    async exec(sql: string) {
      await (tx === undefined ? tracked(() => engine.call('exec', { sql, tx })) : engine.call('exec', { sql, tx }));
    },
  });
  const base = wrap();

  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    bulkQuery<T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      const run = bulkTail
        .then(afterInFlight)
        .then(() => engine.call('query', { sql, params: params as unknown[] | undefined }) as Promise<QueryResult<T>>);
      bulkTail = run.catch(() => undefined);
      return run;
    },
    transaction(fn) {
      return tracked(async () => {
        const tx = await engine.call('begin');
        let result;
        try {
          result = await fn(wrap(tx));
        } catch (err) {
          await engine.call('end', { tx, commit: false }).catch(() => undefined);
          throw err;
        }
        await engine.call('end', { tx, commit: true });
        return result;
      });
    },
    async listen(channel, onMessage) {
      const sub = await engine.call('listen', { channel });
      listeners.set(sub, onMessage);
      return async () => {
        listeners.delete(sub);
        if (!engine.dead) await engine.call('unlisten', { sub });
      };
    },
    async ping() {
      await base.query('/* ping */ select 1');
    },
    async close() {
      if (closed) return;
      if (!engine.dead) await engine.call('close');
      closed = true;
      await engine.terminate();
    },
  };
}
