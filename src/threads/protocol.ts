/**
 * The messages between a worker thread serving calls (serve.ts) and its parent (client.ts).
 *   call          {id, m: method, a: argument}
 *   answer        {id, ok: true, v} or {id, ok: false, e: the error's fields}
 *   notification  {n: channel, v}, thread to parent, unasked (e.g. a LISTEN payload)
 *   ready         the answer with id READY_ID, when the thread announces it (serveThread given
 *                 a promise of its methods)
 */

/** What a thread serves: one function per method, taking one structured-cloneable argument. */
export type Methods<M> = { [K in keyof M]: (arg: never) => unknown };

export interface Call {
  id: number;
  m: string;
  a: unknown;
}

/** The fields an error keeps across the thread boundary; the parent rebuilds an Error from them. */
export type SerializedError = { message: string; name?: string } & Record<
  string,
  string | number | boolean | null | undefined
>;

export type Answer =
  { id: number; ok: true; v?: unknown } | { id: number; ok: false; e: SerializedError } | { n: number; v: unknown };

/** The id of the answer a thread sends once it is ready to serve. */
export const READY_ID = 0;

/** Keeps what callers look at (code, constraint, detail, ...); functions and objects stay behind. */
export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) {
    // Not an Error but an object with fields (the embedded engine's file system errors:
    // { name: 'ErrnoError', errno, code }): keep its fields, and a message built from them.
    if (typeof err !== 'object' || err === null) return { message: String(err) };
    const fields = err as Record<string, unknown>;
    const message =
      typeof fields.message === 'string'
        ? fields.message
        : typeof fields.code === 'string'
          ? fields.code
          : JSON.stringify(primitives(fields));
    return { ...primitives(fields), message };
  }
  const out: SerializedError = { message: err.message, name: err.name };
  for (const [k, v] of Object.entries(err)) {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

function primitives(o: Record<string, unknown>): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}
