/**
 * The guard proxy that is Chromium's only way out, tested with raw sockets (no browser needed):
 * credentials, refusals before any connection, tunnels to allowed addresses, the traffic budget.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AddressGuard, type LookupAll } from '../../src/fetcher/address-guard.js';
import { GuardProxy, type ProxyEvent } from '../../src/fetcher/browser-proxy.js';

const lookup: LookupAll = async (host) => {
  if (host === 'internal.test') return [{ address: '10.0.0.1', family: 4 }];
  if (host === 'loop.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`no ${host}`), { code: 'ENOTFOUND' });
};

function basic(user: string, pass: string): string {
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

/** Send raw bytes to the proxy and read until `until` matches or the socket closes. */
async function raw(port: number, request: string, until = /\r\n\r\n/): Promise<{ text: string; socket: net.Socket }> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(request);
  let text = '';
  await new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (until.test(text)) resolve();
    });
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
  });
  return { text, socket };
}

describe('browser guard proxy', () => {
  let site: http.Server;
  let sitePort: number;
  const siteHits: string[] = [];
  let proxy: GuardProxy;
  let port: number;
  const events: ProxyEvent[] = [];

  before(async () => {
    site = http.createServer((req, res) => {
      siteHits.push(`${req.headers.host ?? ''} ${req.url ?? ''}`);
      if (req.url === '/big') res.end('x'.repeat(100_000));
      else res.end('hello');
    });
    site.listen(0, '127.0.0.1');
    await once(site, 'listening');
    sitePort = (site.address() as net.AddressInfo).port;
    proxy = new GuardProxy({
      guard: new AddressGuard({ allowLoopback: true, lookup }),
      onEvent: (e) => events.push(e),
    });
    port = Number(new URL(await proxy.listen()).port);
  });
  after(async () => {
    await proxy.close();
    site.closeAllConnections();
    await new Promise<void>((r) => site.close(() => r()));
  });

  test('without valid credentials: 407, and nothing is connected', async () => {
    events.length = 0;
    const s = proxy.openSession({ maxBytes: 1e6 });
    for (const auth of [
      '',
      `Proxy-Authorization: ${basic(s.username, 'wrong')}\r\n`,
      `Proxy-Authorization: ${basic('nobody', s.password)}\r\n`,
    ]) {
      const { text, socket } = await raw(port, `CONNECT 127.0.0.1:${sitePort} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
      assert.match(text, /^HTTP\/1\.1 407 /);
      assert.match(text, /Proxy-Authenticate: Basic/i);
      socket.destroy();
    }
    proxy.closeSession(s);
    const { text, socket } = await raw(
      port,
      `GET http://127.0.0.1:${sitePort}/ HTTP/1.1\r\nHost: x\r\nProxy-Authorization: ${basic(s.username, s.password)}\r\n\r\n`,
    );
    assert.match(text, /^HTTP\/1\.1 407 /, 'a closed session no longer works');
    socket.destroy();
    assert.deepEqual(events, []);
    assert.deepEqual(siteHits, []);
  });

  test('CONNECT and plain requests to private, metadata and private-resolving names are refused before any connection', async () => {
    events.length = 0;
    const s = proxy.openSession({ maxBytes: 1e6 });
    const auth = `Proxy-Authorization: ${basic(s.username, s.password)}\r\n`;
    for (const target of ['10.0.0.1:443', '169.254.169.254:443', `internal.test:${sitePort}`, '[fd00:ec2::254]:443']) {
      const { text, socket } = await raw(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
      assert.match(text, /^HTTP\/1\.1 403 /, target);
      socket.destroy();
    }
    // A refused plain request gets no response at all (a cut connection), not a fake 403 page.
    const { text, socket } = await raw(
      port,
      `GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n${auth}\r\n`,
    );
    assert.equal(text, '');
    socket.destroy();
    assert.equal(events.length, 5);
    assert.ok(events.every((e) => !e.allowed && e.address === undefined && e.session === s.username));
    assert.deepEqual(
      s.refused.map((e) => e.code),
      ['blocked_address', 'blocked_address', 'blocked_address', 'blocked_address', 'blocked_address'],
    );
    proxy.closeSession(s);
  });

  test('allowed targets: a CONNECT tunnel and a plain request reach the approved address, by name too', async () => {
    events.length = 0;
    siteHits.length = 0;
    const s = proxy.openSession({ maxBytes: 1e6 });
    const auth = `Proxy-Authorization: ${basic(s.username, s.password)}\r\n`;
    const tunnel = await raw(port, `CONNECT loop.test:${sitePort} HTTP/1.1\r\nHost: loop.test\r\n${auth}\r\n`);
    assert.match(tunnel.text, /^HTTP\/1\.1 200 /);
    let body = '';
    tunnel.socket.removeAllListeners('data');
    tunnel.socket.on('data', (d: Buffer) => (body += d.toString()));
    tunnel.socket.write(`GET /t HTTP/1.1\r\nHost: loop.test:${sitePort}\r\nConnection: close\r\n\r\n`);
    await once(tunnel.socket, 'close');
    assert.match(body, /hello$/);
    const plain = await raw(
      port,
      `GET http://127.0.0.1:${sitePort}/p HTTP/1.1\r\nHost: 127.0.0.1:${sitePort}\r\n${auth}Connection: close\r\n\r\n`,
      /hello/,
    );
    assert.match(plain.text, /^HTTP\/1\.1 200 [\s\S]*hello$/);
    plain.socket.destroy();
    assert.deepEqual(siteHits, [`loop.test:${sitePort} /t`, `127.0.0.1:${sitePort} /p`]);
    assert.deepEqual(
      events.map((e) => [e.kind, e.host, e.allowed, e.address]),
      [
        ['connect', 'loop.test', true, '127.0.0.1'],
        ['http', '127.0.0.1', true, '127.0.0.1'],
      ],
    );
    assert.ok(s.bytes > 0);
    proxy.closeSession(s);
  });

  test('a session with an upstream proxy tunnels through it, still refusing private targets', async () => {
    // A minimal upstream proxy (a competitor's proxy_url) that logs CONNECTs and tunnels them.
    const upstreamLog: string[] = [];
    const upstream = http.createServer();
    upstream.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
      upstreamLog.push(`${req.url ?? ''} ${req.headers['proxy-authorization'] ?? '-'}`);
      const [host, p] = (req.url ?? '').split(':');
      const out = net.connect(Number(p), host === 'loop.test' ? '127.0.0.1' : host);
      out.on('connect', () => {
        client.write('HTTP/1.1 200 OK\r\n\r\n');
        out.pipe(client);
        client.pipe(out);
      });
      out.on('error', () => client.destroy());
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const upPort = (upstream.address() as net.AddressInfo).port;
    try {
      siteHits.length = 0;
      const s = proxy.openSession({ maxBytes: 1e6, upstream: `http://user:p%40ss@127.0.0.1:${upPort}` });
      const auth = `Proxy-Authorization: ${basic(s.username, s.password)}\r\n`;
      const plain = await raw(
        port,
        `GET http://loop.test:${sitePort}/via HTTP/1.1\r\nHost: loop.test:${sitePort}\r\n${auth}Connection: close\r\n\r\n`,
        /hello/,
      );
      assert.match(plain.text, /^HTTP\/1\.1 200 [\s\S]*hello$/);
      plain.socket.destroy();
      const refused = await raw(port, `CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
      assert.match(refused.text, /^HTTP\/1\.1 403 /);
      refused.socket.destroy();
      assert.deepEqual(upstreamLog, [`loop.test:${sitePort} Basic ${Buffer.from('user:p@ss').toString('base64')}`]);
      assert.deepEqual(siteHits, [`loop.test:${sitePort} /via`]);
      proxy.closeSession(s);
    } finally {
      upstream.closeAllConnections();
      await new Promise<void>((r) => upstream.close(() => r()));
    }
  });

  test('a session past its traffic budget has its connections cut', async () => {
    const s = proxy.openSession({ maxBytes: 10_000 });
    const auth = `Proxy-Authorization: ${basic(s.username, s.password)}\r\n`;
    const { text, socket } = await raw(
      port,
      `GET http://127.0.0.1:${sitePort}/big HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      /$^/,
    );
    assert.ok(text.length < 100_000, `received ${text.length} bytes`);
    assert.equal(s.overBudget, true);
    socket.destroy();
    proxy.closeSession(s);
  });
});
