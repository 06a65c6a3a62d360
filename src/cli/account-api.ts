import { loadConfigOrExit } from '../config.js';
import type { ApiAnswer, ApiRequest, OwnerOperations } from '../owner-channel/operations.js';
import { note } from './command.js';
import { CliError, UsageError } from './errors.js';
import { openOperations } from './target.js';

/** The API root the CLI's account commands talk to. */
export const API = '/api/v1';

/** An account's HTTP API as the CLI reaches it: through the owner of the database (./target.ts), with one API key. */
export interface AccountApi {
  /** The answer's JSON; a status outside 2xx is a CliError with the API's own message. */
  json<T>(method: ApiRequest['method'], path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
  /** The raw answer, whatever its status. */
  raw(method: ApiRequest['method'], path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  readonly ops: OwnerOperations;
}

/** --key, else PRICEHOUND_KEY: the account the command works on. */
export function apiKeyOf(values: Record<string, unknown>, command: string): string {
  const key = typeof values.key === 'string' ? values.key : process.env.PRICEHOUND_KEY;
  if (!key) throw new UsageError('an API key is required: set PRICEHOUND_KEY or pass --key (`pricehound keys create` makes one)', command);
  return key;
}

/** The one line an API error body says, with the fields its details name. */
export function apiErrorMessage(answer: ApiAnswer): string {
  try {
    const b = JSON.parse(answer.body) as { error?: string; details?: { field: string; message: string }[] };
    const details = b.details?.length ? `: ${b.details.map((d) => `${d.field} ${d.message}`).join('; ')}` : '';
    return `${b.error ?? `status ${answer.status}`}${details}`;
  } catch {
    return `status ${answer.status}`;
  }
}

export function accountApi(ops: OwnerOperations, key: string): AccountApi {
  const raw = (method: ApiRequest['method'], path: string, body?: unknown, headers?: Record<string, string>) =>
    ops.api({ method, url: `${API}${path}`, key, body, headers });
  return {
    ops,
    raw,
    async json<T>(method: ApiRequest['method'], path: string, body?: unknown, headers?: Record<string, string>) {
      const answer = await raw(method, path, body, headers);
      if (answer.status === 401) throw new CliError('the API key was refused (401): check PRICEHOUND_KEY or --key');
      if (answer.status < 200 || answer.status > 299) throw new CliError(`${method} ${path} answered ${answer.status}: ${apiErrorMessage(answer)}`);
      return JSON.parse(answer.body) as T;
    },
  };
}

/**
 * Runs `fn` with the database's owner (a running server, or this process: then pending
 * migrations are applied first, as the server would) and closes it after.
 */
export async function withOperations<T>(fn: (ops: OwnerOperations) => Promise<T>): Promise<T> {
  const ops = await openOperations(loadConfigOrExit());
  try {
    if (ops.via.kind === 'direct') {
      const applied = await ops.migrate();
      if (applied.length > 0) note(`applied migrations: ${applied.join(', ')}`);
    }
    return await fn(ops);
  } finally {
    await ops.close();
  }
}
