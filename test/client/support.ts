import http from 'node:http';
import net from 'node:net';
import { createKey } from '../../src/auth/keys.js';
import type { Plan } from '../../src/auth/plans.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { TestStorage } from '../helpers/database.js';

/** Shared by the client's tests (clients/typescript against real server processes). Not a test file. */

/** API keys made directly in the storage the servers will use (before they start, for PGlite). */
export async function makeKeys(storage: TestStorage, plans: Plan[]): Promise<string[]> {
  const db = await openDatabase(loadConfig(storage.env));
  try {
    await migrate(db);
    const keys: string[] = [];
    for (const plan of plans) keys.push((await createKey(db, { plan })).key);
    return keys;
  } finally {
    await db.close();
  }
}

/** A loopback port nobody listens on right now (for a server that must come back on the same one). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** A loopback HTTP server answering with `handle`; resolves with its base URL and a close(). */
export async function stubServer(handle: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LossyProxy {
  url: string;
  /** Idempotency keys whose first answer the proxy threw away after the service had answered it. */
  dropped: Set<string>;
  /** Idempotency keys of answers marked `Idempotent-Replayed: true` that the proxy passed on. */
  replayed: Set<string>;
  /** Requests that found nothing listening on `port`. */
  refused: number;
  close(): Promise<void>;
}

/**
 * A proxy on loopback in front of `port` that loses answers: for every `every`-th POST it sends
 * the request on, waits for the service's answer and then cuts the client's connection instead of
 * passing it on, as a network failure after the work was done would. When nothing listens on
 * `port` (a restart), it cuts the connection too.
 */
export async function lossyProxy(port: number, every: number): Promise<LossyProxy> {
  const dropped = new Set<string>();
  const replayed = new Set<string>();
  let posts = 0;
  const counts = { refused: 0 };
  const stub = await stubServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key'] ?? '');
      const drop = req.method === 'POST' && key !== '' && !dropped.has(key) && ++posts % every === 0;
      const up = http.request(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if (drop && answer.statusCode === 201) {
              dropped.add(key);
              res.socket?.destroy();
              return;
            }
            if (answer.headers['idempotent-replayed'] === 'true') replayed.add(key);
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(body));
          });
          answer.on('error', () => res.socket?.destroy());
        },
      );
      up.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') counts.refused++;
        res.socket?.destroy();
      });
      up.end(Buffer.concat(chunks));
    });
  });
  return {
    url: stub.url,
    dropped,
    replayed,
    get refused() {
      return counts.refused;
    },
    close: stub.close,
  };
}
