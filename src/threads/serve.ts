/**
 * The thread's side of client.ts: answers each call with what its method returned (or threw),
 * synchronous methods without a promise in between.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { type Answer, type Call, type Methods, READY_ID, type SerializedError, serializeError } from './protocol.js';

export interface ServeOptions<M> {
  /** What an error becomes on its way to the caller (default: serializeError). */
  serializeError?: (err: unknown) => SerializedError;
  /** After a successful answer to this method the thread stops listening, so it can end. */
  closeAfter?: keyof M & string;
}

function parent(): MessagePort {
  if (!parentPort) throw new Error('not on a worker thread');
  return parentPort;
}

/** An unasked message to the parent on `channel` (ThreadClient's onNotify). */
export function notifyParent(channel: number, value: unknown): void {
  parent().postMessage({ n: channel, v: value } satisfies Answer);
}

/**
 * Serve `methods` to the parent. Given a promise of them (an engine still starting), calls are
 * served once it resolves, and the parent is told (ThreadClient's handshake); if it rejects,
 * the parent gets the error and the thread ends with it.
 */
export async function serveThread<M extends Methods<M>>(
  methods: M | Promise<M>,
  opts: ServeOptions<M> = {},
): Promise<void> {
  const port = parent();
  const toSerialized = opts.serializeError ?? serializeError;
  const reply = (a: Answer): void => port.postMessage(a);
  let served: M;
  if (methods instanceof Promise) {
    try {
      served = await methods;
    } catch (err) {
      reply({ id: READY_ID, ok: false, e: toSerialized(err) });
      port.close();
      throw err;
    }
    reply({ id: READY_ID, ok: true });
  } else {
    served = methods;
  }
  const table = served as unknown as Record<string, (arg: unknown) => unknown>;
  const answer = (c: Call, v: unknown): void => {
    reply({ id: c.id, ok: true, v });
    if (c.m === opts.closeAfter) port.close();
  };
  const fail = (c: Call, err: unknown): void => reply({ id: c.id, ok: false, e: toSerialized(err) });
  port.on('message', (c: Call) => {
    let v: unknown;
    try {
      if (!Object.hasOwn(table, c.m)) throw new Error(`no method ${c.m}`);
      v = table[c.m]!(c.a);
    } catch (err) {
      fail(c, err);
      return;
    }
    if (v instanceof Promise)
      v.then(
        (r: unknown) => answer(c, r),
        (err: unknown) => fail(c, err),
      );
    else answer(c, v);
  });
}
