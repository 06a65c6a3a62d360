/**
 * The only way out of the browser. Chromium is started with this in-process HTTP proxy as its
 * proxy for everything (loopback included: Playwright adds `<-loopback>`) and with a host
 * resolver that resolves nothing, so every connection any page makes — sub-resources, redirect
 * hops (which `page.route` never sees), preconnects, WebSockets, fetch() from workers — arrives
 * here as `CONNECT host:port` or an absolute-URI request. Each one passes the address guard and
 * is connected to exactly the address that was approved (DNS rebinding gains nothing).
 *
 * Each fetch gets its own session: its browser context uses this proxy with the session's
 * credentials, so the proxy knows which fetch a connection belongs to. That gives a per-fetch
 * traffic budget, the list of refusals (to explain a failed navigation), an optional upstream
 * proxy (a competitor's proxy_url), and no use at all by anyone without credentials: the port
 * is on 127.0.0.1, but other local processes must not get an open proxy out of it.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { AddressGuard } from './address-guard.js';
import { urlPort } from './url-policy.js';
import { FetchError } from './types.js';

/** One decision of the proxy: a connection it opened or refused. */
export interface ProxyEvent {
  /** The fetch session (null: no or bad credentials). */
  session: string | null;
  kind: 'connect' | 'http' | 'upgrade';
  host: string;
  port: number;
  allowed: boolean;
  /** The address connected to (allowed; through an upstream proxy: the proxy's address). */
  address?: string;
  reason?: string;
}

export interface GuardProxyOptions {
  guard: AddressGuard;
  /** TCP connect timeout to a site or upstream proxy, in ms. */
  connectTimeoutMs?: number;
  onEvent?: (e: ProxyEvent) => void;
}

export interface ProxySessionOptions {
  /** Bytes the fetch may receive in all (every connection, as sent on the wire). */
  maxBytes: number;
  /** Tunnel through this HTTP proxy (a competitor's proxy_url); its own address passes the guard. */
  upstream?: string | null;
}

const REALM = 'Basic realm="pricehound-browser"';

export class ProxySession {
  readonly username: string;
  readonly password: string;
  /** Bytes received from sites so far. */
  bytes = 0;
  /** Set once `bytes` passed the budget; every connection of the session is then cut. */
  overBudget = false;
  /** Connections refused, newest last (the first one explains a failed navigation). */
  readonly refused: FetchError[] = [];
  readonly sockets = new Set<Duplex>();
  closed = false;

  constructor(
    readonly maxBytes: number,
    readonly upstream: URL | null,
  ) {
    this.username = `f${crypto.randomBytes(6).toString('hex')}`;
    this.password = crypto.randomBytes(18).toString('base64url');
  }

  /** Count bytes received; past the budget, cut everything. */
  received(n: number): void {
    this.bytes += n;
    if (!this.overBudget && this.bytes > this.maxBytes) {
      this.overBudget = true;
      this.destroySockets();
    }
  }

  destroySockets(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}

function parseHostPort(authority: string, defaultPort: number): { host: string; port: number } | null {
  try {
    const u = new URL(`http://${authority}`);
    const port = u.port === '' ? defaultPort : Number(u.port);
    if (u.hostname === '' || !(port > 0 && port < 65536)) return null;
    return { host: u.hostname, port };
  } catch {
    return null;
  }
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

export class GuardProxy {
  private readonly guard: AddressGuard;
  private readonly connectTimeoutMs: number;
  private readonly onEvent: ((e: ProxyEvent) => void) | undefined;
  private readonly sessions = new Map<string, ProxySession>();
  private readonly clientSockets = new Set<net.Socket>();
  private server: http.Server | null = null;
  private listening: Promise<string> | null = null;

  constructor(opts: GuardProxyOptions) {
    this.guard = opts.guard;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.onEvent = opts.onEvent;
  }

  /** Start listening on 127.0.0.1 (once); resolves to `http://127.0.0.1:PORT`. */
  listen(): Promise<string> {
    this.listening ??= new Promise<string>((resolve, reject) => {
      const server = http.createServer((req, res) => void this.onRequest(req, res));
      server.on(
        'connect',
        (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.onConnect(req, socket, head),
      );
      server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => this.onUpgrade(req, socket));
      server.on('connection', (s: net.Socket) => {
        this.clientSockets.add(s);
        s.on('close', () => this.clientSockets.delete(s));
      });
      server.on('clientError', (_err, socket) => socket.destroy());
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        this.server = server;
        resolve(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      });
    });
    return this.listening;
  }

  openSession(opts: ProxySessionOptions): ProxySession {
    const s = new ProxySession(opts.maxBytes, opts.upstream ? new URL(opts.upstream) : null);
    this.sessions.set(s.username, s);
    return s;
  }

  /** End a session: its connections are cut and its credentials stop working. */
  closeSession(s: ProxySession): void {
    s.closed = true;
    this.sessions.delete(s.username);
    s.destroySockets();
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) this.closeSession(s);
    const server = this.server;
    this.server = null;
    this.listening = null;
    if (!server) return;
    for (const s of this.clientSockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private emit(e: ProxyEvent): void {
    try {
      this.onEvent?.(e);
    } catch {
      // an observer's failure is not the proxy's
    }
  }

  private authenticate(req: http.IncomingMessage): ProxySession | null {
    const header = req.headers['proxy-authorization'];
    if (typeof header !== 'string' || !header.toLowerCase().startsWith('basic ')) return null;
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const s = this.sessions.get(decoded.slice(0, colon));
    if (!s || s.closed) return null;
    const given = Buffer.from(decoded.slice(colon + 1));
    const want = Buffer.from(s.password);
    return given.length === want.length && crypto.timingSafeEqual(given, want) ? s : null;
  }

  /**
   * Pass the guard for host:port (or the session's upstream proxy), then open a TCP connection
   * to the approved address. Throws FetchError on refusal.
   */
  private async dial(
    session: ProxySession,
    host: string,
    port: number,
  ): Promise<{ socket: net.Socket; address: string; viaUpstream: boolean }> {
    // The target is checked even through an upstream proxy (which resolves it itself): a
    // literal private address or a name that resolves to one is refused either way.
    const target = await this.guard.resolve(stripBrackets(host), port);
    let address = target[0]!.address;
    let connectPort = port;
    const up = session.upstream;
    if (up) {
      connectPort = urlPort(up);
      const upAddrs = await this.guard.resolve(stripBrackets(up.hostname), connectPort);
      address = upAddrs[0]!.address;
    }
    const tcp = net.connect({ host: address, port: connectPort });
    // An https: upstream proxy is spoken to over TLS (verified against its name).
    const socket: net.Socket =
      up?.protocol === 'https:' ? tls.connect({ socket: tcp, servername: stripBrackets(up.hostname) }) : tcp;
    const ready = up?.protocol === 'https:' ? 'secureConnect' : 'connect';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new FetchError('timeout', `connecting to ${host}:${port} took longer than ${this.connectTimeoutMs} ms`));
      }, this.connectTimeoutMs);
      socket.once(ready, () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(
          new FetchError('network', `connecting to ${host}:${port} failed: ${err.message}`, undefined, { cause: err }),
        );
      });
    });
    if (up) await this.upstreamConnect(socket, up, host, port);
    return { socket, address, viaUpstream: up !== null };
  }

  /** Ask the upstream proxy for a tunnel to host:port on `socket`. */
  private async upstreamConnect(socket: net.Socket, up: URL, host: string, port: number): Promise<void> {
    const auth = up.username
      ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(up.username)}:${decodeURIComponent(up.password)}`).toString('base64')}\r\n`
      : '';
    const authority = net.isIPv6(stripBrackets(host)) ? `[${stripBrackets(host)}]:${port}` : `${host}:${port}`;
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    await new Promise<void>((resolve, reject) => {
      let buf = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > 16_384) fail(new Error('oversized reply'));
          return;
        }
        socket.off('data', onData);
        socket.off('error', fail);
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(buf.subarray(0, end).toString('latin1'));
        if (status?.[1] !== '200') {
          fail(new Error(`the proxy answered ${status?.[1] ?? 'garbage'}`));
          return;
        }
        const rest = buf.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        resolve();
      };
      const fail = (err: Error): void => {
        socket.off('data', onData);
        socket.destroy();
        reject(
          new FetchError('network', `proxy ${up.host} refused a tunnel to ${host}:${port}: ${err.message}`, undefined, {
            cause: err,
          }),
        );
      };
      socket.on('data', onData);
      socket.once('error', fail);
    });
  }

  private refuse(
    session: ProxySession | null,
    kind: ProxyEvent['kind'],
    host: string,
    port: number,
    err: unknown,
  ): FetchError {
    const fe = err instanceof FetchError ? err : new FetchError('network', String(err));
    session?.refused.push(fe);
    this.emit({ session: session?.username ?? null, kind, host, port, allowed: false, reason: fe.message });
    return fe;
  }

  private track(session: ProxySession, ...sockets: Duplex[]): boolean {
    if (session.closed || session.overBudget) {
      for (const s of sockets) s.destroy();
      return false;
    }
    for (const s of sockets) {
      session.sockets.add(s);
      s.once('close', () => session.sockets.delete(s));
    }
    return true;
  }

  private async onConnect(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const session = this.authenticate(req);
    if (!session) {
      client.end(
        `HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: ${REALM}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      return;
    }
    const hp = parseHostPort(req.url ?? '', 443);
    if (!hp) {
      this.refuse(
        session,
        'connect',
        req.url ?? '',
        0,
        new FetchError('invalid_url', `bad CONNECT target ${req.url ?? ''}`),
      );
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    let upstream: net.Socket;
    try {
      const d = await this.dial(session, hp.host, hp.port);
      upstream = d.socket;
      this.emit({
        session: session.username,
        kind: 'connect',
        host: hp.host,
        port: hp.port,
        allowed: true,
        address: d.address,
      });
    } catch (err) {
      this.refuse(session, 'connect', hp.host, hp.port, err);
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if (!this.track(session, client, upstream)) return;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('data', (chunk: Buffer) => session.received(chunk.length));
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    const session = this.authenticate(req);
    if (!session) {
      res.writeHead(407, { 'proxy-authenticate': REALM, 'content-length': '0', connection: 'close' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      this.refuse(
        session,
        'http',
        req.url ?? '',
        0,
        new FetchError('invalid_url', `bad proxy request target ${req.url ?? ''}`),
      );
      res.writeHead(400, { 'content-length': '0', connection: 'close' }).end();
      return;
    }
    const port = target.port === '' ? 80 : Number(target.port);
    let socket: net.Socket;
    try {
      const d = await this.dial(session, target.hostname, port);
      socket = d.socket;
      this.emit({
        session: session.username,
        kind: 'http',
        host: target.hostname,
        port,
        allowed: true,
        address: d.address,
      });
    } catch (err) {
      this.refuse(session, 'http', target.hostname, port, err);
      // No response at all: a 403 from here would look like the site's own answer to the
      // page. A cut connection fails the request in the browser, and the fetcher reads the
      // reason from the session.
      req.socket.destroy();
      return;
    }
    if (!this.track(session, req.socket, socket)) return;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (k.startsWith('proxy-') || k === 'connection' || k === 'keep-alive') continue;
      headers[k] = v;
    }
    // Through an upstream proxy too: dial() opened a CONNECT tunnel to the target, so the
    // request goes in origin form and the proxy never sees it in plaintext.
    const path = `${target.pathname}${target.search}`;
    const out = http.request({ createConnection: () => socket, method: req.method, path, headers, setHost: false });
    out.on('response', (up) => {
      up.on('data', (chunk: Buffer) => session.received(chunk.length));
      res.writeHead(up.statusCode ?? 502, up.rawHeaders);
      up.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-length': '0', connection: 'close' }).end();
      else res.destroy();
    });
    req.pipe(out);
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex): void {
    // Chromium tunnels WebSockets with CONNECT; a plain upgrade through the proxy is refused.
    const session = this.authenticate(req);
    this.refuse(
      session,
      'upgrade',
      req.url ?? '',
      0,
      new FetchError('unsupported_content', 'WebSocket upgrade without CONNECT'),
    );
    socket.destroy();
  }
}
