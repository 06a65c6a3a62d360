import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { after, before } from 'node:test';
import { buildApp, type App } from '../../src/app.js';
import type { TestApp } from '../helpers/app.js';

export interface ListeningApp {
  app: App;
  port: number;
  /** The app's JSON log lines so far. */
  logs: Record<string, unknown>[];
  /** Resolves with the first log line from index `from` on (past or future) that matches. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
}

/**
 * A second app on the test app's runtime, listening on a loopback port and logging at info into
 * `logs`: for socket-level tests and for what a request writes to the log.
 */
export function useListeningApp(t: TestApp): ListeningApp {
  const l = { logs: [] } as unknown as ListeningApp;
  const waiters = new Set<() => void>();
  l.waitForLog = (match, from = 0) =>
    new Promise((resolve) => {
      const check = () => {
        const found = l.logs.slice(from).find(match);
        if (!found) return false;
        waiters.delete(check);
        resolve(found);
        return true;
      };
      if (!check()) waiters.add(check);
    });
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const line of chunk.toString().split('\n'))
          if (line) l.logs.push(JSON.parse(line) as Record<string, unknown>);
        for (const w of [...waiters]) w();
        cb();
      },
    });
    l.app = await buildApp(t.rt, { logger: pino({ level: 'info' }, sink) });
    await l.app.listen({ port: 0, host: '127.0.0.1' });
    l.port = (l.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await l.app?.close();
  });
  return l;
}

/** Lines at error level or above, or with a stack trace anywhere. */
export function noisyLines(logs: Record<string, unknown>[]): Record<string, unknown>[] {
  return logs.filter((l) => Number(l.level) >= 50 || JSON.stringify(l).includes('"stack"'));
}

/** A POST whose headers promise 100 bytes of body and whose body stops after 8: a stalled upload. */
export function stalledUpload(key: string): string {
  return [
    'POST /api/v1/products HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    'Content-Length: 100',
    '',
    '{"name":',
  ].join('\r\n');
}
