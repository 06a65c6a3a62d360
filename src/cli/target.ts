import { setTimeout as delay } from 'node:timers/promises';
import { createClient, type PricehoundClient } from '@pricehound/client';
import type { OwnerOperations } from '../owner-channel/operations.js';
import { OwnerChannelUnreachableError, probeOwnerChannel, channelOperations } from '../owner-channel/client.js';
import { type Config, loadConfigOrExit } from '../config.js';
import type { App } from '../app.js';
import type { Runtime } from '../runtime.js';
import { DataDirInUseError, readOwner } from '../db/data-dir-lock.js';
import { note } from './command.js';
import { CliError } from './errors.js';

/**
 * Opens the database in this process. Loaded on demand: talking to a server needs no driver.
 * The HTTP app that `api` requests go to is built on the first such request only.
 */
async function openDirect(config: Config): Promise<OwnerOperations> {
  const [{ openDatabase }, { localOperations }] = await Promise.all([
    import('../db/open.js'),
    import('../owner-channel/local.js'),
  ]);
  const db = config.databaseUrl
    ? await openDatabase({ ...config, databasePoolSize: 2 }, { applicationName: 'pricehound-cli' })
    : await openDatabase(config);
  let opened: Promise<{ app: App; rt: Runtime }> | undefined;
  const openApp = async () => {
    const [{ default: pino }, { createRuntime }, { buildApp }] = await Promise.all([
      import('pino'),
      import('../runtime.js'),
      import('../app.js'),
    ]);
    const rt = await createRuntime(config, pino({ level: 'silent' }), { db });
    const app = await buildApp(rt);
    await app.ready();
    return { app, rt };
  };
  return localOperations(db, {
    ownsDb: true,
    inject: async (request) => {
      opened ??= openApp();
      const { app } = await opened;
      const { apiInjector } = await import('../app.js');
      return apiInjector(() => app)(request);
    },
    beforeClose: async () => {
      if (!opened) return;
      const { app, rt } = await opened;
      await app.close();
      await rt.close();
    },
  });
}

/** How long to wait for a DATA_DIR held by a process that does not answer yet (a server starting). */
const OWNER_WAIT_MS = 60_000;

/**
 * Where the CLI's database commands run. With DATABASE_URL: on a connection of its own (PostgreSQL
 * serves any number of processes). With the embedded database only one process may open
 * DATA_DIR, so: if a live process holds it, through that server's owner channel; otherwise the
 * CLI opens DATA_DIR itself, holding the lock until it is done.
 *
 * A holder that does not answer on its socket is a server still starting or another CLI
 * command at work: we wait for it to answer or let go, up to OWNER_WAIT_MS.
 */
export async function openOperations(config: Config): Promise<OwnerOperations> {
  if (config.databaseUrl) return openDirect(config);
  const deadline = Date.now() + OWNER_WAIT_MS;
  let wait = 50;
  for (;;) {
    const owner = readOwner(config.dataDir);
    if (owner) {
      try {
        await probeOwnerChannel(owner.socket);
        return channelOperations(owner.socket, owner.pid);
      } catch (err) {
        if (!(err instanceof OwnerChannelUnreachableError)) throw err;
      }
      if (Date.now() >= deadline) {
        throw new CliError(
          `DATA_DIR ${config.dataDir} is held by process ${owner.pid}, which does not answer on its socket ${owner.socket}; ` +
            `if that process is not pricehound, remove ${config.dataDir}/pricehound.lock`,
        );
      }
    } else {
      try {
        return await openDirect(config);
      } catch (err) {
        if (!(err instanceof DataDirInUseError)) throw err; // a server took it just now: go round again
      }
    }
    await delay(wait);
    wait = Math.min(wait * 2, 500);
  }
}

/**
 * Runs `fn` with the database's owner (a running server, or this process: then pending
 * migrations are applied first, as the server would) and closes it after. For the operator
 * commands (keys, migrate); the account commands talk HTTP to a server (./account.ts).
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

const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * The typed client over the database owner's HTTP API (`ops.api`: Fastify inject in this process,
 * or the running server's owner channel), for a command that holds the host rather than a URL
 * (`demo`, which makes its own account). The same calls as over a socket, without one.
 */
export function ownerClient(ops: OwnerOperations, key: string): PricehoundClient {
  return createClient({
    baseUrl: 'http://owner.invalid',
    apiKey: key,
    timeoutMs: 0,
    fetch: async (request) => {
      const method = request.method.toUpperCase();
      if (!METHODS.has(method)) throw new Error(`the owner channel does not carry ${method}`);
      const text = request.body ? await request.text() : '';
      const headers: Record<string, string> = {};
      request.headers.forEach((v, k) => {
        if (k !== 'authorization' && k !== 'content-type' && k !== 'content-length') headers[k] = v;
      });
      const u = new URL(request.url);
      const answer = await ops.api({
        method: method as 'GET',
        url: `${u.pathname}${u.search}`,
        key,
        ...(text ? { body: JSON.parse(text) as unknown } : {}),
        headers,
      });
      return new Response([204, 304].includes(answer.status) ? null : answer.body, {
        status: answer.status,
        headers: answer.headers,
      });
    },
  });
}
