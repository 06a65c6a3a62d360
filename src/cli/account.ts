import { createClient, type PricehoundClient, type Usage } from '@pricehound/client';
import { UsageError } from './errors.js';

/**
 * The account commands (`import`, `export`) are clients of a pricehound server, like any other:
 * they talk HTTP to --url (or PRICEHOUND_URL, else the address a local `pricehound start`
 * listens on) with --key (or PRICEHOUND_KEY), through the typed client. They never open a
 * database, so they work against any server, local or remote, and never create a DATA_DIR.
 */

/** Where a server started on this machine with the defaults (HOST, PORT) listens. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

export const ACCOUNT_OPTIONS = {
  url: { type: 'string' as const },
  key: { type: 'string' as const },
};

export const ACCOUNT_HELP = `  --url URL            the pricehound server (default: $PRICEHOUND_URL, else ${DEFAULT_URL})
  --key KEY            the API key, whose account this is (default: $PRICEHOUND_KEY)`;

export interface AccountClient {
  ph: PricehoundClient;
  url: string;
  /** Requests sent so far (every attempt: each counts against the key's hourly limit). */
  readonly requests: number;
}

function serverUrl(values: Record<string, unknown>, command: string): string {
  const raw = typeof values.url === 'string' ? values.url : process.env.PRICEHOUND_URL || DEFAULT_URL;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--url must be the server's address, such as ${DEFAULT_URL}; got "${raw}"`, command);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`--url must be http:// or https://, got "${raw}"`, command);
  if (u.username || u.password)
    throw new UsageError('--url must not hold credentials: the API key goes in --key or PRICEHOUND_KEY', command);
  return u.origin + u.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

/** The typed client of the server and key the command was given; wrong usage before any request. */
export function accountClient(values: Record<string, unknown>, command: string): AccountClient {
  const key = typeof values.key === 'string' ? values.key : process.env.PRICEHOUND_KEY;
  if (!key)
    throw new UsageError(
      'an API key is required: set PRICEHOUND_KEY or pass --key (`pricehound keys create` makes one)',
      command,
    );
  const url = serverUrl(values, command);
  let requests = 0;
  const ph = createClient({
    baseUrl: url,
    apiKey: key,
    headers: { 'user-agent': `pricehound-cli (${command})` },
    // A long import or export is many calls: each waits as long as a slow batch may take.
    timeoutMs: 120_000,
    fetch: (request) => {
      requests++;
      return fetch(request);
    },
  });
  return {
    ph,
    url,
    get requests() {
      return requests;
    },
  };
}

/** "3 requests (997 of 1000 left this hour)": what a command cost the key. */
export function cost(requests: number, usage: Usage | undefined): string {
  const left = usage
    ? ` (${usage.remaining} of ${usage.limit} left in the key's hour, until ${new Date(usage.reset * 1000).toISOString()})`
    : '';
  return `${requests} request${requests === 1 ? '' : 's'}${left}`;
}
