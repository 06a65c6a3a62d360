import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote before it closed the connection. */
  raw: string;
}

/**
 * Writes `parts` to a new loopback connection (each part after the previous, `gapMs` apart) and
 * reads until the server closes it: for what `inject` cannot send (malformed HTTP, stalled
 * bodies). Rejects if the server has not closed the connection within `timeoutMs`.
 */
export function rawExchange(
  port: number,
  parts: (string | Buffer)[],
  opts: { timeoutMs?: number; gapMs?: number } = {},
): Promise<RawResponse> {
  const { timeoutMs = 10_000, gapMs = 0 } = opts;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `the server did not close the connection within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString()}`,
        ),
      );
    }, timeoutMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined); // a reset after the answer still ends in 'close'
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
    });
    socket.on('connect', async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        if (!socket.destroyed) socket.write(p);
      }
    });
  });
}

export function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: end < 0 ? '' : raw.slice(end + 4), raw };
}
