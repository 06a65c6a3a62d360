/**
 * undici dispatchers whose every connection goes through the address guard. Use these (not a
 * bare undici Agent) for any request to an address a user supplied: page checks, robots.txt,
 * webhook deliveries.
 */
import type { LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, Pool, ProxyAgent, buildConnector } from 'undici';
import type { AddressGuard } from './address-guard.js';
import { urlPort } from './url-policy.js';

export interface GuardedConnectOptions {
  /** TCP + TLS connect timeout in ms (default 10 s). */
  timeoutMs?: number;
  /** Extra TLS options (CA bundle and the like). */
  tls?: ConnectionOptions;
}

/**
 * An undici connector that asks the guard before any socket is created, then connects with the
 * guard's lookup so the socket reaches exactly the approved addresses. Literal IPs (which Node
 * connects to without a lookup) are checked in the first step. A refusal reaches the request as
 * the guard's FetchError('blocked_address').
 */
export function createGuardedConnector(
  guard: AddressGuard,
  opts: GuardedConnectOptions = {},
): buildConnector.connector {
  const base = buildConnector({
    ...opts.tls,
    timeout: opts.timeoutMs ?? 10_000,
    lookup: guard.lookup as LookupFunction,
  } as buildConnector.BuildOptions);
  return (connectOpts, callback) => {
    guard.resolve(connectOpts.hostname, urlPort(connectOpts)).then(
      () => base(connectOpts, callback),
      (err: Error) => callback(err, null),
    );
  };
}

export type GuardedAgentOptions = Omit<Agent.Options, 'connect'> & GuardedConnectOptions;

/** A pooled, keep-alive Agent whose connections all pass the guard. */
export function createGuardedAgent(guard: AddressGuard, opts: GuardedAgentOptions = {}): Agent {
  const { timeoutMs, tls, ...agentOpts } = opts;
  return new Agent({ ...agentOpts, connect: createGuardedConnector(guard, { timeoutMs, tls }) });
}

/**
 * An HTTP(S) proxy dispatcher. The connection to the proxy itself passes the guard (a proxy URL
 * comes from a competitor's settings, which users edit, so it is user input like any page URL);
 * every request is tunnelled with CONNECT, so the proxy never sees the page's plaintext. The
 * target host cannot be pinned through a proxy (the proxy resolves it), so callers check the
 * target with the guard before dispatching.
 */
export function createGuardedProxyAgent(
  proxyUrl: string,
  guard: AddressGuard,
  opts: GuardedAgentOptions = {},
): ProxyAgent {
  const { timeoutMs, tls, ...agentOpts } = opts;
  const connect = createGuardedConnector(guard, { timeoutMs, tls });
  return new ProxyAgent({
    ...agentOpts,
    uri: proxyUrl,
    proxyTunnel: true,
    clientFactory: (origin, poolOpts) => new Pool(origin, { ...poolOpts, connect }),
  });
}
