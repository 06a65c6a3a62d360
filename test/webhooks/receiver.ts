import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on 127.0.0.1 for tests (not a test file itself). */

export interface Received {
  /** The request's path and query. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to answer: a status, optional headers and body; or 'hang' to never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Answers each request; the default answers 204. A promise: answered when it resolves. */
  answer: (req: Received, n: number) => Answer | Promise<Answer>;
  /** Resolves once `predicate` holds over what was received (checked on each request). */
  until(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops listening (connections are refused) and closes open ones; `listen()` starts again on the same port. */
  down(): Promise<void>;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const waiters: { predicate: (r: Received[]) => boolean; resolve: () => void }[] = [];
  let server: http.Server;
  const r: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 204 }),
    async until(predicate, timeoutMs = 30_000) {
      if (predicate(r.received)) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${r.received.length} received)`)),
          timeoutMs,
        );
        waiters.push({
          predicate,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async listen() {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const got: Received = {
            path: req.url ?? '',
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            at: Date.now(),
          };
          r.received.push(got);
          const a = r.answer(got, r.received.length);
          const send = (a: Answer) => {
            if (a !== 'hang' && !res.destroyed) {
              res.writeHead(a.status, a.headers);
              res.end(a.body);
            }
          };
          if (!(a instanceof Promise)) send(a);
          for (const w of [...waiters]) {
            if (w.predicate(r.received)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve();
            }
          }
          if (a instanceof Promise) void a.then(send);
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve) => server.listen(r.port, '127.0.0.1', resolve));
      r.port = (server.address() as AddressInfo).port;
      r.url = `http://127.0.0.1:${r.port}${path}`;
    },
    async close() {
      if (server.listening) await r.down();
    },
  };
  await r.listen();
  return r;
}
