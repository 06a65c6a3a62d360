import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { createKeyWithCli } from '../cli/helpers/cli.js';

/** A raw HTTP/1.1 connection, so a request can be left half-sent. */
class RawConnection {
  received = '';
  readonly closed: Promise<void>;
  private waiters: { match: (s: string) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.received += d.toString('latin1');
      for (const w of [...this.waiters]) {
        if (!w.match(this.received)) continue;
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    });
    this.closed = once(socket, 'close').then(() => {
      for (const w of this.waiters)
        w.reject(new Error(`connection closed; received: ${JSON.stringify(this.received)}`));
    });
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /** Resolves once what was received so far matches. */
  until(match: (s: string) => boolean): Promise<void> {
    if (match(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ match, resolve, reject }));
  }
}

/**
 * Sends the head of a POST and waits until the server has taken the request in: the
 * `Expect: 100-continue` header makes Node answer "100 Continue" when it hands the request to
 * the app, which proves it is in progress (merely connecting would not: an idle connection is
 * closed at shutdown). Then half of the body, leaving the request unfinished.
 */
async function startSlowPost(url: string, key: string, body: string): Promise<{ conn: RawConnection; rest: string }> {
  const conn = await RawConnection.open(url);
  conn.socket.write(
    'POST /api/v1/products HTTP/1.1\r\n' +
      `Host: ${new URL(url).host}\r\n` +
      `Authorization: Bearer ${key}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Expect: 100-continue\r\n\r\n',
  );
  await conn.until((s) => s.startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
  const half = Math.floor(body.length / 2);
  conn.socket.write(body.slice(0, half));
  return { conn, rest: body.slice(half) };
}

function connectionRefused(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(port), hostname);
    s.on('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

describe('graceful shutdown', () => {
  let storage: TestStorage;
  let server: ServerProcess | undefined;
  before(async () => {
    storage = await testStorage();
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage.cleanup();
  });

  it('on SIGTERM finishes a request still being received, refuses new connections and exits 0', async () => {
    server = await spawnServer(storage.env);
    const k = await createKeyWithCli(storage.env);
    const body = JSON.stringify({ name: 'Grinder', sku: 'GR-1', base_price: 89.5, currency: 'EUR' });
    const { conn, rest } = await startSlowPost(server.url, k.key, body);

    server.proc.kill('SIGTERM');
    await server.waitForLog((l) => String(l.msg).startsWith('shutting down'));
    assert.equal(await connectionRefused(server.url), 'ECONNREFUSED');

    conn.socket.write(rest);
    await conn.closed; // the server closes the connection after answering, as it is stopping
    const response = conn.received.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
    assert.match(response, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(response, /\r\nconnection: close\r\n/i);
    const product = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.equal(product.name, 'Grinder');
    assert.equal(product.base_price, 89.5);

    const exit = await server.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(server.logs.some((l) => l.msg === 'stopped'));
    assert.equal(await connectionRefused(server.url), 'ECONNREFUSED');

    // It was written: a new server on the same data has it.
    server = await spawnServer(storage.env);
    const got = await fetch(`${server.url}/api/v1/products/${String(product.id)}`, {
      headers: { authorization: `Bearer ${k.key}` },
    });
    assert.equal(got.status, 200);
    assert.deepEqual(await got.json(), product);
    assert.equal((await server.stop()).code, 0);
  });

  it('cuts a request that does not finish within SHUTDOWN_TIMEOUT_MS, then exits', async () => {
    server = await spawnServer({ ...storage.env, SHUTDOWN_TIMEOUT_MS: '300' });
    const k = await createKeyWithCli(storage.env);
    const { conn } = await startSlowPost(
      server.url,
      k.key,
      JSON.stringify({ name: 'Never', base_price: 1, currency: 'EUR' }),
    );

    server.proc.kill('SIGTERM');
    await server.waitForLog((l) => l.msg === 'shutdown timeout: cutting the connections still open');
    await conn.closed;
    assert.equal(conn.received, 'HTTP/1.1 100 Continue\r\n\r\n', 'no response for the unfinished request');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });
});
