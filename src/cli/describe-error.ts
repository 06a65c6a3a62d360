import { ApiError, NetworkError, TimeoutError } from '@pricehound/client';
import { OwnerChannelRequestError, OwnerChannelUnreachableError } from '../owner-channel/client.js';
import { UnknownAccountError } from '../auth/keys.js';
import { ConfigError } from '../config.js';
import { DataDirInUseError } from '../db/data-dir-lock.js';
import { DatabaseUnavailableError, isUnavailable } from '../db/types.js';
import { CliError, redactUrl } from './errors.js';

/*
 * Loaded only when a command has failed (src/cli/main.ts): the error classes it tells apart come
 * with most of the application's modules, which `pricehound --help` need not load.
 */

/** What an operator reads for the file system errors DATA_DIR can meet. */
const FILE_SYSTEM_WHY: Record<string, string> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  ENOTDIR: 'part of the path is a file, not a directory',
};

/**
 * A file system error in DATA_DIR, from our own files (with its path) or from the embedded
 * engine's (no path, only when DATA_DIR holds the database; the engine's thread may have died of
 * it, so its code is looked for on the error, its cause, and the start of their messages).
 */
function dataDirFailure(err: unknown, env: { databaseUrl?: string | undefined; dataDir?: string }): string | undefined {
  if (!env.dataDir) return undefined;
  for (
    let x = err as (ErrnoLike & { path?: unknown }) | undefined, depth = 0;
    x && depth < 3;
    x = x.cause as typeof x, depth++
  ) {
    const code = typeof x.code === 'string' ? x.code : /^(E[A-Z]+): /.exec(String(x.message ?? ''))?.[1];
    // A socket's EACCES (listening on a privileged port) is not a file's.
    if (!code || !FILE_SYSTEM_WHY[code] || ['listen', 'bind', 'connect'].includes(String(x.syscall))) continue;
    const path = typeof x.path === 'string' ? x.path : undefined;
    if (path ? !path.startsWith(env.dataDir) : Boolean(env.databaseUrl)) continue;
    const on = path ? ` on ${path}` : '';
    return `cannot write DATA_DIR ${env.dataDir}: ${FILE_SYSTEM_WHY[code]} (${code}${on}); give pricehound a writable directory with free space, or set DATA_DIR to another one`;
  }
  return undefined;
}

interface ErrnoLike {
  code?: unknown;
  syscall?: unknown;
  address?: unknown;
  port?: unknown;
  severity?: unknown;
  cause?: unknown;
  message?: unknown;
}

/**
 * One line that tells an operator what went wrong and what to look at, for the errors start-up
 * and the commands can meet. Never a stack trace: that is for bugs, and LOG_LEVEL=debug shows it.
 */
export function describeError(err: unknown, env: { databaseUrl?: string | undefined; dataDir?: string } = {}): string {
  if (err instanceof CliError) return err.message;
  const api = describeApiError(err);
  if (api) return api;
  if (err instanceof ConfigError) return `invalid configuration: ${err.message}`;
  if (err instanceof DataDirInUseError) {
    const dir = env.dataDir ? `DATA_DIR ${env.dataDir}` : 'DATA_DIR';
    return `${dir} is in use by another pricehound process (pid ${err.owner.pid}); stop it first, or set DATA_DIR to another directory`;
  }
  if (err instanceof UnknownAccountError) return `${err.message}: check the account id with \`pricehound keys list\``;
  if (err instanceof OwnerChannelUnreachableError) {
    return `the server that owns DATA_DIR stopped answering on its socket ${err.socketPath} (${err.code}); is it shutting down?`;
  }
  if (err instanceof OwnerChannelRequestError) {
    // A failure (5xx) is in the server's log under its request id.
    const logged = err.status >= 500 && err.requestId ? ` (request_id ${err.requestId} in the server's log)` : '';
    return `the server refused the request: ${err.message}${logged}`;
  }

  const e = (err ?? {}) as ErrnoLike;
  const where = env.databaseUrl ? ` at ${redactUrl(env.databaseUrl)} (DATABASE_URL)` : '';
  const disk = dataDirFailure(err, env);
  if (disk) return disk;
  if (err instanceof DatabaseUnavailableError || isUnavailable(err)) {
    const cause = (e.cause ?? err) as ErrnoLike;
    return `cannot reach the database${where}: ${String(cause.message ?? e.message)}`;
  }
  if (e.syscall === 'listen' && typeof e.code === 'string') {
    const addr = `${String(e.address ?? '')}:${String(e.port ?? '')}`;
    const why =
      e.code === 'EADDRINUSE' ? 'the address is already in use' : e.code === 'EACCES' ? 'permission denied' : e.code;
    return `cannot listen on ${addr}: ${why} (see PORT and HOST)`;
  }
  if (typeof e.severity === 'string' && typeof e.code === 'string') {
    // an error reported by PostgreSQL itself: authentication, missing database, permissions ...
    return `the database refused${where}: ${String(e.message)} (SQLSTATE ${e.code})`;
  }
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && typeof e.message === 'string') return e.message;
  return err instanceof Error ? err.message : String(err);
}

/** Why a request got no answer: the innermost `code` of the error's causes (ECONNREFUSED, ENOTFOUND, ...), else the innermost message. */
function noAnswerWhy(err: unknown): string {
  let code: string | undefined;
  let message = String((err as Error).message);
  for (let x = err as ErrnoLike | undefined, depth = 0; x && depth < 5; x = x.cause as ErrnoLike | undefined, depth++) {
    if (typeof x.code === 'string') code = x.code;
    if (typeof x.message === 'string' && x.message) message = x.message;
  }
  return code ?? message;
}

/** What the account commands' server said, or why it said nothing, as one line (src/cli/account.ts). */
function describeApiError(err: unknown): string | undefined {
  if (err instanceof ApiError) {
    if (err.status === 401)
      return 'the API key was refused (401): check PRICEHOUND_KEY or --key, and that it is a key of this server';
    const details = err.details.length > 0 ? `: ${err.details.map((d) => `${d.field} ${d.message}`).join('; ')}` : '';
    const id = err.requestId ? ` (request_id ${err.requestId})` : '';
    return `the server answered ${err.status} ${err.code}: ${err.message}${details}${id}`;
  }
  if (err instanceof NetworkError) {
    const at = /https?:\/\/[^/\s]+/.exec(err.message)?.[0] ?? 'the server';
    const why = err instanceof TimeoutError ? 'no answer in time' : noAnswerWhy(err);
    return `cannot reach a pricehound server at ${at} (${why}): start one (\`pricehound start\`), or point --url or PRICEHOUND_URL at yours`;
  }
  return undefined;
}
