/**
 * The embedded engine's own thread (started by src/db/pglite.ts). PGlite runs PostgreSQL as
 * WebAssembly synchronously on the thread that calls it, so on the main thread every query
 * stopped all HTTP work for as long as it ran. Here it stops nothing but this thread.
 *
 * Protocol (main -> worker), each with an `id` the answer repeats:
 *   q  {sql, params, tx?}  query (inside transaction `tx` when given)
 *   x  {sql, tx?}          exec (several statements)
 *   begin                  opens a transaction; answered with its `tx` once it holds the engine
 *   end {tx, commit}       commits (or rolls back) `tx`; answered when PGlite has done so
 *   listen {channel}       answered with a subscription id; notifications come as {n: sub, payload}
 *   unlisten {sub}
 *   close
 * Answers: {id, ok: true, v} or {id, ok: false, e: {message, name, code, constraint, ...}}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction, types } from '@electric-sql/pglite';
import { PreparedStatements } from './pglite-prepared.js';

export type Request =
  | { id: number; t: 'q'; sql: string; params?: unknown[]; tx?: number }
  | { id: number; t: 'x'; sql: string; tx?: number }
  | { id: number; t: 'begin' }
  | { id: number; t: 'end'; tx: number; commit: boolean }
  | { id: number; t: 'listen'; channel: string }
  | { id: number; t: 'unlisten'; sub: number }
  | { id: number; t: 'close' };

export type SerializedError = { message: string; name?: string } & Record<string, string | number | boolean | null>;

export type Answer =
  | { id: number; ok: true; v?: unknown }
  | { id: number; ok: false; e: SerializedError }
  | { n: number; payload: string };

/** Keeps what the callers look at (code, constraint, detail, ...); functions and objects stay here. */
export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: SerializedError = { message: err.message, name: err.name };
  for (const [k, v] of Object.entries(err)) {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

class RollbackRequested extends Error {}
const NO_REPLY = Symbol('no reply');

const port = parentPort;
if (port) {
  const { dir } = workerData as { dir: string };
  const reply = (a: Answer) => port.postMessage(a);
  const fail = (id: number, err: unknown) => reply({ id, ok: false, e: serializeError(err) });

  let pg: PGlite;
  try {
    pg = await PGlite.create(dir, {
      parsers: { [types.INT8]: (v: string) => Number(v), [types.NUMERIC]: (v: string) => v },
    });
    reply({ id: 0, ok: true });
  } catch (err) {
    fail(0, err);
    port.close();
    throw err;
  }

  const prepared = new PreparedStatements(pg);
  const txs = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>();
  const subs = new Map<number, () => Promise<void>>();
  let nextTx = 1;
  let nextSub = 1;

  const target = (tx: number | undefined): Pick<PGlite, 'query' | 'exec'> => {
    if (tx === undefined) return pg;
    const t = txs.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return t.tx;
  };

  const handle = async (m: Request): Promise<unknown> => {
    switch (m.t) {
      case 'q': {
        const t = target(m.tx); // throws for a transaction that is not open
        // Parameterised statements run prepared (parsed and planned once); the rest as before.
        const r =
          m.params && m.params.length > 0 && prepared.accepts(m.sql)
            ? await prepared.query(m.sql, m.params, m.tx !== undefined)
            : await t.query(m.sql, m.params);
        return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
      }
      case 'x':
        await target(m.tx).exec(m.sql);
        return undefined;
      case 'begin': {
        const txId = nextTx++;
        // Answered from inside the callback: the transaction holds the engine until `end`.
        pg.transaction(
          (tx) =>
            new Promise<void>((resolve, reject) => {
              txs.set(txId, { tx, end: (commit) => (commit ? resolve() : reject(new RollbackRequested())) });
              reply({ id: m.id, ok: true, v: txId });
            }),
        ).then(
          () => settle(txId, undefined),
          (err: unknown) => settle(txId, err instanceof RollbackRequested ? undefined : err),
        );
        return NO_REPLY;
      }
      case 'end': {
        const t = txs.get(m.tx);
        if (!t) throw new Error(`transaction ${m.tx} is not open`);
        ending.set(m.tx, m.id);
        t.end(m.commit);
        return NO_REPLY;
      }
      case 'listen': {
        const sub = nextSub++;
        subs.set(sub, await pg.listen(m.channel, (payload) => reply({ n: sub, payload })));
        return sub;
      }
      case 'unlisten': {
        const unsub = subs.get(m.sub);
        subs.delete(m.sub);
        await unsub?.();
        return undefined;
      }
      case 'close':
        if (!pg.closed) await pg.close();
        return undefined;
    }
  };

  /** `end` requests waiting for their transaction to finish, by transaction id. */
  const ending = new Map<number, number>();
  const settle = (txId: number, err: unknown) => {
    txs.delete(txId);
    const id = ending.get(txId);
    ending.delete(txId);
    if (id === undefined) return;
    if (err === undefined) reply({ id, ok: true });
    else fail(id, err);
  };

  port.on('message', (m: Request) => {
    handle(m).then(
      (v) => {
        if (v !== NO_REPLY) reply({ id: m.id, ok: true, v });
        if (m.t === 'close') port.close();
      },
      (err: unknown) => fail(m.id, err),
    );
  });
}
