import fs from 'node:fs';
import path from 'node:path';
import { ThreadClient } from '../threads/client.js';
import type { EngineMethods } from './pglite-worker.js';
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
  const listeners = new Map<number, (payload: string) => void>();
  let closed = false;
  // The engine's thread sits next to this file (src/db/pglite-worker.ts).
  const engine = new ThreadClient<EngineMethods>(new URL('./pglite-worker.js', import.meta.url), {
    name: 'worker',
    workerData: { dir },
    handshake: true,
    failure: (err) =>
      closed ? new DatabaseUnavailableError('the embedded database is closed') : new DatabaseUnavailableError(`the embedded database stopped: ${err.message}`, { cause: err }),
    onNotify: (sub, payload) => listeners.get(sub)?.(payload as string),
  });

  try {
    await engine.ready;
  } catch (err) {
    await engine.terminate();
    throw err;
  }

  const wrap = (tx?: number): Queryable => ({
    query<T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      return engine.call('query', { sql, params: params as unknown[] | undefined, tx }) as Promise<QueryResult<T>>;
    },
    async exec(sql: string) {
      await engine.call('exec', { sql, tx });
    },
  });
  const base = wrap();

  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    async transaction(fn) {
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
      await base.query('select 1');
    },
    async close() {
      if (closed) return;
      if (!engine.dead) await engine.call('close');
      closed = true;
      await engine.terminate();
    },
  };
}
