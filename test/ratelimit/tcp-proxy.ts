import { once } from 'node:events';
import net from 'node:net';

/**
 * A loopback TCP proxy in front of Redis that a test can take down, bring back on the same port,
 * or hold (connections stay open, nothing is passed on until released, as with a hung Redis), to
 * see what the rate limiter does when Redis goes away. Not a test file itself.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private held = false;
  private readonly clients = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Listens (on the port it had before, if it had one) and forwards every connection. */
  async start(): Promise<void> {
    const server = net.createServer((client) => {
      this.sockets.add(client);
      this.clients.add(client);
      client.on('close', () => {
        this.sockets.delete(client);
        this.clients.delete(client);
      });
      client.on('error', () => client.destroy());
      const upstream = net.connect(this.targetPort, this.targetHost);
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.on('data', (d) => upstream.write(d));
      upstream.on('data', (d) => client.write(d));
      if (this.held) client.pause();
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection, as when Redis goes down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps connections open but passes nothing on to Redis until released (in order). */
  hold(on: boolean): void {
    this.held = on;
    for (const c of this.clients) {
      if (on) c.pause();
      else c.resume();
    }
  }
}
