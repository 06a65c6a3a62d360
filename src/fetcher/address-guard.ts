/**
 * The SSRF guard of every outbound request (page checks, robots.txt, webhooks): a host name is
 * resolved, and if ANY of its addresses lies outside the public unicast space the request is
 * refused before a socket exists. `ALLOW_LOOPBACK_TARGETS` opens exactly 127.0.0.0/8 and ::1
 * (tests), `allowTargets` single loopback `address:port` pairs (the demo's shop); nothing opens
 * the private, link-local, unique-local, shared (CGNAT), multicast, reserved or cloud-metadata
 * ranges.
 *
 * The addresses that passed are the ones connected to: `AddressGuard.lookup` is given to the
 * socket as its DNS lookup, and `createGuardedConnector` (src/fetcher/agent.ts) re-checks at the
 * connect step, so a name that re-resolves to another address between check and connect (DNS
 * rebinding) gains nothing. Literal IPs in URLs are checked the same way; the WHATWG URL parser
 * has already normalised `http://2130706433/`, `http://0x7f000001/` and `http://0177.1/` to
 * `127.0.0.1` by the time a host name reaches this module.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { FetchError } from './types.js';
import { acceptPageUrl, urlPort } from './url-policy.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolve a host name to all of its addresses (the default: `dns.lookup(host, { all: true })`). */
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;

export interface AddressPolicy {
  /** Allow 127.0.0.0/8 and ::1 (ALLOW_LOOPBACK_TARGETS). Never opens any other range. */
  allowLoopback: boolean;
  /**
   * Loopback targets allowed one by one when `allowLoopback` is off, as `address:port`
   * (`127.0.0.1:4791`, `[::1]:4791`): `pricehound demo` opens its own shop and nothing else on
   * the machine. They match a URL that names the address literally, on that port; a name that
   * resolves to it does not match, and nothing outside loopback can be listed.
   */
  allowTargets?: readonly string[];
}

export interface ResolveOptions extends AddressPolicy {
  /** Replaces the system resolver (tests map names to addresses without any DNS traffic). */
  lookup?: LookupAll;
}

/** What an address is, as far as outbound requests care. Only `public` is always allowed. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'shared'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'metadata'
  | 'tunnel'
  | 'invalid';

export interface AddressClass {
  kind: AddressKind;
  /** For IPv4-mapped / NAT64 / 6to4 addresses: the IPv4 address carried, which decided `kind`. */
  embedded?: string;
}

/**
 * Cloud metadata and host-agent endpoints. Most lie in ranges refused anyway (link-local,
 * unique-local, CGNAT); they are listed so the refusal says what they are, and because Azure's
 * WireServer (168.63.129.16) sits in public address space.
 */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle instance metadata
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.253', // AWS VPC DNS
  '100.100.100.200', // Alibaba Cloud metadata
  '168.63.129.16', // Azure WireServer / host agent
  '192.0.0.192', // Oracle Cloud (classic) metadata
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS time sync over IPv6
]);

const V4_KIND: Record<string, AddressKind> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'shared',
  private: 'private',
};

const V6_KIND: Record<string, AddressKind> = {
  unicast: 'public',
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'private',
  teredo: 'tunnel',
};

function classifyV4(ip: ipaddr.IPv4): AddressKind {
  if (METADATA_ADDRESSES.has(ip.toString())) return 'metadata';
  return V4_KIND[ip.range()] ?? 'reserved';
}

/** Classify one IP address (dotted IPv4 or IPv6, with or without brackets). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = net.isIP(bare);
  if (family === 4) {
    // net.isIP accepts only four-part decimal, so ipaddr's lenient forms never reach here.
    return { kind: classifyV4(ipaddr.IPv4.parse(bare)) };
  }
  if (family !== 6) return { kind: 'invalid' };
  let ip: ipaddr.IPv6;
  try {
    ip = ipaddr.IPv6.parse(bare);
  } catch {
    return { kind: 'invalid' };
  }
  if (ip.zoneId !== undefined) return { kind: 'link-local' };
  if (METADATA_ADDRESSES.has(ip.toRFC5952String())) return { kind: 'metadata' };
  const range = ip.range() as string;
  const p = ip.parts;
  // Addresses that carry an IPv4 address are judged by it. Loopback reached this way is refused
  // even when loopback is allowed (the setting opens exactly 127.0.0.0/8 and ::1).
  let embedded: ipaddr.IPv4 | undefined;
  if (range === 'ipv4Mapped' || range === 'rfc6145') {
    embedded = ip.toIPv4Address();
  } else if (range === 'rfc6052') {
    // 64:ff9b::/96 (well-known NAT64 prefix) carries the IPv4 address in its last 32 bits; the
    // local-use 64:ff9b:1::/48 is a private network's own translator: refused outright.
    if (p[2] !== 0) return { kind: 'private' };
    embedded = v4FromWords(p[6]!, p[7]!);
  } else if (range === '6to4') {
    embedded = v4FromWords(p[1]!, p[2]!);
  } else if (
    range !== 'loopback' &&
    range !== 'unspecified' &&
    p[0] === 0 &&
    p[1] === 0 &&
    p[2] === 0 &&
    p[3] === 0 &&
    p[4] === 0 &&
    p[5] === 0
  ) {
    // ::/96 beyond :: and ::1: deprecated IPv4-compatible addresses. Nothing public lives here.
    return { kind: 'reserved' };
  }
  if (embedded) {
    const kind = classifyV4(embedded);
    return { kind: kind === 'loopback' ? 'reserved' : kind, embedded: embedded.toString() };
  }
  return { kind: V6_KIND[range] ?? 'reserved' };
}

function v4FromWords(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** May an outbound request connect to this address under the policy? (`allowTargets` needs the port: see `assertAllowedAddress`.) */
export function isAllowedAddress(address: string, policy: AddressPolicy): boolean {
  const { kind } = classifyAddress(address);
  return kind === 'public' || (kind === 'loopback' && policy.allowLoopback);
}

/** The policy of the deployment's settings (ALLOW_LOOPBACK_TARGETS; the demo's `allowTargets`). */
export function addressPolicy(settings: {
  allowLoopbackTargets: boolean;
  allowTargets?: readonly string[];
}): AddressPolicy {
  return { allowLoopback: settings.allowLoopbackTargets, allowTargets: settings.allowTargets };
}

/** `address:port` as `allowTargets` lists it (IPv6 in brackets). */
export function targetOf(address: string, port: number): string {
  return `${net.isIP(address) === 6 ? `[${address}]` : address}:${port}`;
}

const KIND_TEXT: Record<AddressKind, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private network address',
  'link-local': 'a link-local address',
  'unique-local': 'a private (unique-local) IPv6 address',
  shared: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or special-purpose address',
  metadata: 'a cloud metadata address',
  tunnel: 'a tunnelling (Teredo) address',
  invalid: 'not a valid address',
};

/**
 * Throw FetchError('blocked_address') unless `address` (of `host`) is allowed. The message names
 * the rule broken: for a literal address, the address and what it is; for a name, only what kind
 * of address it resolves to, never the address itself, so a key holder cannot use refusals to
 * learn what internal names resolve to (the text reaches API answers, delivery logs and checks).
 */
export function assertAllowedAddress(host: string, address: string, policy: AddressPolicy, port?: number): void {
  const cls = classifyAddress(address);
  if (cls.kind === 'public' || (cls.kind === 'loopback' && policy.allowLoopback)) return;
  const literal = stripBrackets(host) === address;
  if (
    cls.kind === 'loopback' &&
    literal &&
    port !== undefined &&
    policy.allowTargets?.includes(targetOf(address, port))
  )
    return;
  const what = cls.embedded && literal ? `${KIND_TEXT[cls.kind]} (it carries ${cls.embedded})` : KIND_TEXT[cls.kind];
  const where = literal ? `${address} is` : `${host} resolves to`;
  const hint =
    cls.kind === 'loopback' ? ' (ALLOW_LOOPBACK_TARGETS=true allows loopback addresses, for tests and demos)' : '';
  throw new FetchError(
    'blocked_address',
    `${where} ${what}; pricehound does not fetch private, loopback, link-local or cloud metadata addresses${hint}`,
  );
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * A URL's host as it is judged and looked up: without brackets, in lower case, and a name
 * without the trailing dot of its absolute form (`localhost.` is `localhost`, `shop.test.` is
 * `shop.test`), so each form meets the rule of its plain form. An empty host, or a name with
 * an empty label (`a..b`), is FetchError('invalid_url'), decided without a lookup.
 */
export function judgedHost(hostname: string): string {
  let host = stripBrackets(hostname).toLowerCase();
  if (net.isIP(host) === 0 && host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') throw new FetchError('invalid_url', 'the URL has no host');
  if (net.isIP(host) === 0 && host.split('.').includes(''))
    throw new FetchError('invalid_url', "the URL's host name has an empty label");
  return host;
}

/**
 * `localhost` and the names under it are loopback (RFC 6761), whatever a resolver would say:
 * refused without asking DNS unless loopback is allowed.
 */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The system resolver: `dns.lookup` (getaddrinfo, so /etc/hosts counts), every address, in order. */
export const systemLookup: LookupAll = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

async function lookupOrFail(hostname: string, lookup: LookupAll): Promise<ResolvedAddress[]> {
  let found: ResolvedAddress[];
  try {
    found = await lookup(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOTFOUND' || code === 'ENODATA'
        ? 'no such host'
        : code === 'EAI_AGAIN'
          ? 'DNS did not answer'
          : (code ?? 'lookup failed');
    throw new FetchError('dns_failed', `${hostname} does not resolve (${why})`, undefined, { cause: err });
  }
  if (found.length === 0) throw new FetchError('dns_failed', `${hostname} does not resolve (no addresses)`);
  return found;
}

/**
 * Resolve `hostname` (a name or a literal IP, brackets allowed) and return ALL its addresses, or
 * throw FetchError('blocked_address') if any of them is refused, or FetchError('dns_failed').
 * Refusing when any address is bad (not just the first) closes the trick of publishing one
 * public and one private address and hoping the connect picks the private one. `port` (the
 * URL's, default ports included) is what `allowTargets` are matched with.
 */
export async function resolveAllowedAddresses(
  hostname: string,
  opts: ResolveOptions,
  port?: number,
): Promise<ResolvedAddress[]> {
  const host = judgedHost(hostname);
  const family = net.isIP(host);
  if (family !== 0) {
    assertAllowedAddress(host, host, opts, port);
    return [{ address: host, family: family === 6 ? 6 : 4 }];
  }
  // The loopback refusal, said of the name (never looked up).
  if (isLocalhostName(host)) assertAllowedAddress(host, '127.0.0.1', opts);
  const found = await lookupOrFail(host, opts.lookup ?? systemLookup);
  for (const a of found) assertAllowedAddress(host, a.address, opts);
  return found;
}

/** `resolveAllowedAddresses`, returning the first (preferred) address: the one to connect to. */
export async function resolveAllowedAddress(
  hostname: string,
  opts: ResolveOptions,
  port?: number,
): Promise<ResolvedAddress> {
  return (await resolveAllowedAddresses(hostname, opts, port))[0]!;
}

/** Node's socket `lookup` option signature (net.connect / tls.connect). */
export type SocketLookup = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
) => void;

export interface AddressGuardOptions extends ResolveOptions {
  /** How long an approved resolution is reused, in ms (default 30 s; 0 disables the cache). */
  cacheTtlMs?: number;
  /** Most host names remembered (default 10 000). */
  maxEntries?: number;
  now?: () => number;
}

/**
 * A policy plus a small cache of approved resolutions, shared by the pre-flight check of a URL
 * and the connect step of its socket: the socket connects to the addresses that were checked
 * (and checked again if the cache entry expired in between).
 */
export class AddressGuard {
  readonly allowLoopback: boolean;
  private readonly policy: AddressPolicy;
  private readonly lookupAll: LookupAll;
  private readonly ttl: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, { addresses: ResolvedAddress[]; expires: number }>();
  /** Resolutions in progress, so a burst of checks to one host asks DNS once. */
  private readonly pending = new Map<string, Promise<ResolvedAddress[]>>();

  constructor(opts: AddressGuardOptions) {
    this.allowLoopback = opts.allowLoopback;
    this.policy = { allowLoopback: opts.allowLoopback, allowTargets: opts.allowTargets };
    this.lookupAll = opts.lookup ?? systemLookup;
    this.ttl = opts.cacheTtlMs ?? 30_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The approved addresses of `hostname` (name or literal IP); throws FetchError otherwise.
   * `port`: where the request goes (`allowTargets` match a literal address with it).
   */
  resolve(hostname: string, port?: number): Promise<ResolvedAddress[]> {
    let host: string;
    try {
      host = judgedHost(hostname);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (net.isIP(host) !== 0) return resolveAllowedAddresses(host, this.policy, port);
    const hit = this.cache.get(host);
    if (hit && hit.expires > this.now()) {
      // Cached entries were approved under this guard's (immutable) policy; re-assert anyway,
      // it is cheap and keeps the invariant local.
      for (const a of hit.addresses) assertAllowedAddress(host, a.address, this.policy);
      return Promise.resolve(hit.addresses);
    }
    let p = this.pending.get(host);
    if (!p) {
      p = resolveAllowedAddresses(host, { ...this.policy, lookup: this.lookupAll });
      this.pending.set(host, p);
      p.then(
        (addresses) => {
          this.pending.delete(host);
          if (this.ttl > 0) this.remember(host, addresses);
        },
        () => this.pending.delete(host),
      );
    }
    return p;
  }

  private remember(host: string, addresses: ResolvedAddress[]): void {
    this.cache.delete(host);
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(host, { addresses, expires: this.now() + this.ttl });
  }

  /** Throw unless the literal address may be connected to. */
  assertAddress(host: string, address: string): void {
    assertAllowedAddress(host, address, this.policy);
  }

  /**
   * A `lookup` for net.connect/tls.connect: serves only approved addresses, so the socket
   * connects to what was checked. Handles `all: true` (Node's happy-eyeballs connect).
   */
  readonly lookup: SocketLookup = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (addresses) => {
        const wanted =
          options.family === 4 || options.family === 6
            ? addresses.filter((a) => a.family === options.family)
            : addresses;
        if (wanted.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${String(options.family)} address`);
          err.code = 'ENOTFOUND';
          callback(err, '');
          return;
        }
        if (options.all)
          callback(
            null,
            wanted.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * Why a page URL would be refused before any lookup, or undefined: the URL policy
 * (`acceptPageUrl`), then a literal address (`http://10.0.0.1/`, `http://[::1]/`) or a
 * `localhost` name judged by the policy. A name is not looked up: creating many listings at
 * once must not wait for (or send) DNS queries, and the guard runs again before every fetch, so
 * a name that resolves to a private address is still never fetched.
 */
export function pageUrlProblemWithoutLookup(raw: string, policy: AddressPolicy): string | undefined {
  try {
    const u = acceptPageUrl(raw);
    const host = judgedHost(u.hostname);
    const port = urlPort(u);
    if (net.isIP(host) !== 0) assertAllowedAddress(host, host, policy, port);
    else if (isLocalhostName(host)) assertAllowedAddress(host, '127.0.0.1', policy);
    return undefined;
  } catch (err) {
    if (err instanceof FetchError) return err.message;
    throw err;
  }
}
