/**
 * Shared set-up of the fetcher tests: a config (defaults as loadConfig gives them, loopback
 * allowed, no per-host delay), a resolver that maps test names to addresses without any DNS
 * traffic, and an observer of every socket and undici connection attempt in this process.
 */
import dc from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { loadConfig } from '../../../src/config.js';
import type { LookupAll, ResolvedAddress } from '../../../src/fetcher/address-guard.js';
import { FetchError } from '../../../src/fetcher/types.js';
import type { HttpFetcherConfig } from '../../../src/fetcher/http.js';

export const TEST_UA = 'pricehound-test/1.0 (+https://pricehound.invalid/fetcher-tests)';

export function testConfig(overrides: Partial<HttpFetcherConfig> = {}): HttpFetcherConfig {
  const c = loadConfig({});
  return {
    allowLoopbackTargets: true,
    userAgent: TEST_UA,
    fetchTimeoutMs: c.fetchTimeoutMs,
    fetchMaxBytes: c.fetchMaxBytes,
    fetchMaxRedirects: c.fetchMaxRedirects,
    fetchDomainConcurrency: 8,
    fetchDomainDelayMs: 0,
    ...overrides,
  };
}

/**
 * A resolver from a fixed table (name -> addresses); unknown names fail like NXDOMAIN. Counts
 * calls per name. Nothing is asked of any DNS server.
 */
export function tableLookup(
  table: Record<string, string[] | (() => string[])>,
): LookupAll & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const fn = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.set(hostname, (calls.get(hostname) ?? 0) + 1);
    const entry = table[hostname];
    if (entry === undefined) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = 'ENOTFOUND';
      throw err;
    }
    const list = typeof entry === 'function' ? entry() : entry;
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

export interface ConnectionLog {
  /** Sockets created by net.connect (any client socket of this process). */
  sockets: Socket[];
  /** Host names undici was about to connect to (undici:client:beforeConnect). */
  undiciHosts: string[];
  /** Remote addresses sockets actually connected to. */
  connectedTo: string[];
  stop(): void;
}

/** Record every outgoing connection attempt of this process until stop(). */
export function observeConnections(): ConnectionLog {
  const log: ConnectionLog = {
    sockets: [],
    undiciHosts: [],
    connectedTo: [],
    stop() {
      dc.unsubscribe('net.client.socket', onSocket);
      dc.unsubscribe('undici:client:beforeConnect', onBeforeConnect);
    },
  };
  const onSocket = (msg: unknown): void => {
    const socket = (msg as { socket: Socket }).socket;
    log.sockets.push(socket);
    socket.once('connect', () => log.connectedTo.push(socket.remoteAddress ?? '?'));
  };
  const onBeforeConnect = (msg: unknown): void => {
    log.undiciHosts.push((msg as { connectParams: { hostname: string } }).connectParams.hostname);
  };
  dc.subscribe('net.client.socket', onSocket);
  dc.subscribe('undici:client:beforeConnect', onBeforeConnect);
  return log;
}

/** Await a promise expected to reject with a FetchError; returns it. */
export async function fetchError(p: Promise<unknown>): Promise<FetchError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FetchError) return err;
    throw err;
  }
  throw new Error('expected a FetchError, but the fetch succeeded');
}
