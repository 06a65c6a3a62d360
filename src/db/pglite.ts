import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Answer, Request, SerializedError } from './pglite-worker.js';
import type { Database, Queryable, QueryResult } from './types.js';
import { DatabaseUnavailableError } from './types.js';

// Distributive, so each request kind keeps its own fields once `id` is taken off.
type Outgoing = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

/**
 * The worker sits next to this file: pglite-worker.js in dist. Run from source (tsx: tests, `npm
 * run dev`) it is pglite-worker.ts, and a worker thread does not inherit tsx's loader, so it
 * registers it first.
 */
function startWorker(dir: string): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(`./pglite-worker${fromSource ? '.ts' : '.js'}`, import.meta.url);
  if (!fromSource) return new Worker(url, { workerData: { dir } });
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`, {
    eval: true,
    workerData: { dir },
  });
}

function rebuild(e: SerializedError): Error {
  const err = new Error(e.message);
  Object.assign(err, e);
  return err;
}

/**
 * Embedded PostgreSQL (WASM) persisted in a directory, run on its own worker thread
 * (src/db/pglite-worker.ts) so that a long query does not stop the event loop: other requests
 * keep being read, authenticated and answered while it runs. Still a single connection: PGlite
 * runs one statement at a time and a transaction holds it, so keep transactions short.
 * Only one process may open `dir` (see src/db/data-dir-lock.ts).
 * Results are the same JS types as before: int8 -> number, numeric -> string, timestamptz -> Date.
 */
export async function openPglite(dir: string): Promise<Database> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return openInWorker(dir);
  // Creating a cluster (initdb) grows the engine's WebAssembly memory to ~850 MiB, and WASM
  // memory never shrinks: a server started on a new DATA_DIR kept that for its whole life. A
  // second worker opening the now-existing directory starts at ~370 MiB, for ~1 s more once.
  const creating = await openInWorker(dir);
  await creating.close();
  return openInWorker(dir);
}

async function openInWorker(dir: string): Promise<Database> {
  const worker = startWorker(dir);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<number, (payload: string) => void>();
  let nextId = 1;
  let dead: Error | undefined;
  let closed = false;

  // The worker keeps the process alive only while an answer is awaited, as PGlite in-process did.
  const refresh = () => (pending.size > 0 ? worker.ref() : worker.unref());

  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (a: Answer) => {
    if ('n' in a) {
      listeners.get(a.n)?.(a.payload);
      return;
    }
    const p = pending.get(a.id);
    if (!p) return;
    pending.delete(a.id);
    refresh();
    if (a.ok) p.resolve(a.v);
    else p.reject(rebuild(a.e));
  });
  const die = (err: Error) => {
    dead ??= closed ? new DatabaseUnavailableError('the embedded database is closed') : new DatabaseUnavailableError(`the embedded database stopped: ${err.message}`, { cause: err });
    for (const p of pending.values()) p.reject(dead);
    pending.clear();
  };
  worker.on('error', die);
  worker.on('exit', (code) => die(new Error(`worker exited with code ${code}`)));

  const call = <T>(m: Outgoing): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      refresh();
      worker.postMessage({ ...m, id });
    });
  };

  try {
    await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  refresh();

  const wrap = (tx?: number): Queryable => ({
    query<T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      return call<QueryResult<T>>({ t: 'q', sql, params: params as unknown[] | undefined, tx });
    },
    async exec(sql: string) {
      await call({ t: 'x', sql, tx });
    },
  });
  const base = wrap();

  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    async transaction(fn) {
      const tx = await call<number>({ t: 'begin' });
      let result;
      try {
        result = await fn(wrap(tx));
      } catch (err) {
        await call({ t: 'end', tx, commit: false }).catch(() => undefined);
        throw err;
      }
      await call({ t: 'end', tx, commit: true });
      return result;
    },
    async listen(channel, onMessage) {
      const sub = await call<number>({ t: 'listen', channel });
      listeners.set(sub, onMessage);
      return async () => {
        listeners.delete(sub);
        if (!dead) await call({ t: 'unlisten', sub });
      };
    },
    async ping() {
      await base.query('select 1');
    },
    async close() {
      if (closed) return;
      if (!dead) await call({ t: 'close' });
      closed = true;
      await worker.terminate();
    },
  };
}
