import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { batchedStdout } from './ops/log-stream.js';
import { OwnerChannelUnreachableError, probeOwnerChannel } from './owner-channel/client.js';
import { localOperations } from './owner-channel/local.js';
import type { OwnerOperations } from './owner-channel/operations.js';
import { type OwnerChannelServer, startOwnerChannel } from './owner-channel/server.js';
import type { Config } from './config.js';
import { ownerChannelPath, DataDirInUseError } from './db/data-dir-lock.js';
import { type App, apiInjector, buildApp } from './app.js';
import type { BackgroundWork } from './jobs/background.js';
import { startBackgroundWork } from './jobs/tasks.js';
import { type CoreRuntime, createCoreRuntime, createRuntime, type Runtime } from './runtime.js';

/** After SHUTDOWN_TIMEOUT_MS connections are cut; this much later the process exits regardless. */
const CLOSE_GRACE_MS = 10_000;
/** How long to wait for a `pricehound keys ...` or `migrate` command that has DATA_DIR open. */
const COMMAND_WAIT_MS = 30_000;

/**
 * createRuntime, but when DATA_DIR is held by a process that does not answer on its owner channel
 * (a CLI command at work, which takes a second or so) wait for it to let go instead of failing a
 * restart that happened to coincide with it. A holder that answers is a server: refused at once.
 */
async function openRuntime(config: Config, log: pino.Logger): Promise<Runtime> {
  const deadline = Date.now() + COMMAND_WAIT_MS;
  let wait = 50;
  let told = false;
  for (;;) {
    try {
      return await createRuntime(config, log);
    } catch (err) {
      if (!(err instanceof DataDirInUseError) || Date.now() >= deadline) throw err;
      const isServer = await probeOwnerChannel(err.owner.socket).then(
        () => true,
        (probeErr: unknown) => !(probeErr instanceof OwnerChannelUnreachableError),
      );
      if (isServer) throw err;
      if (!told)
        log.info(
          { holder_pid: err.owner.pid },
          'DATA_DIR is held by another process (a pricehound command?); waiting for it',
        );
      told = true;
      await delay(wait);
      wait = Math.min(wait * 2, 500);
    }
  }
}

/** What a process runs: `start` both, `serve` the API, `worker` the checks. */
export interface Roles {
  api: boolean;
  worker: boolean;
}

/** The API and/or the check worker, as opened. */
interface Running {
  rt: Runtime | CoreRuntime;
  app: App | undefined;
  ownerChannel: OwnerChannelServer | undefined;
  /** The background tasks of the process's roles (src/jobs/tasks.ts): the check worker, timers. */
  background: BackgroundWork | undefined;
}

/**
 * Starts the API and/or the check worker in this process and stops them cleanly on
 * SIGTERM/SIGINT.
 *
 * Start-up: open and migrate the database (with the embedded one, taking DATA_DIR's lock), open
 * the owner channel (embedded only: the CLI's way in while we hold DATA_DIR), start the background
 * work of the process's roles (src/jobs/tasks.ts: the check worker, the API's timers), then
 * listen. Failures are thrown for the CLI to print as one line; whatever was opened is
 * closed first. A worker-only process needs DATABASE_URL (src/cli/commands/start.ts checks).
 *
 * Shutdown: stop accepting connections and claiming checks at once, let requests and checks in
 * progress finish (connections still open after SHUTDOWN_TIMEOUT_MS are cut, checks still
 * running are abandoned and their listings given back), flush usage counts, close the database
 * (releasing DATA_DIR), remove the owner channel's socket, exit 0. A second signal exits at once.
 */
export interface Started {
  /** Where the API listens (undefined for a worker). */
  url: string | undefined;
  /** The owner operations on this process's database and API (the demo seeds through them). */
  operations: OwnerOperations;
}

export async function startServer(config: Config, roles: Roles = { api: true, worker: true }): Promise<Started> {
  // Lines written to stdout in batches of up to 10 ms, flushed synchronously on exit, so the lines
  // logged just before process.exit() (fatal errors, shutdown) are not lost (src/ops/log-stream.ts).
  const log = pino({ level: config.logLevel, redact: ['req.headers.authorization'] }, batchedStdout());
  // A bug that escapes every handler still ends as one JSON log line, not a bare stack trace.
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception: exiting');
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    log.fatal({ err }, 'unhandled promise rejection: exiting');
    process.exit(1);
  });
  const started = Date.now();
  const rt = roles.api ? await openRuntime(config, log) : await createCoreRuntime(config, log);
  const running: Running = { rt, app: undefined, ownerChannel: undefined, background: undefined };
  const ops = localOperations(rt.db, {
    onRevoked: (id) => (rt as Runtime).keys?.evict(id),
    inject: apiInjector(() => running.app),
  });
  let stopping = false;
  try {
    if (roles.api && rt.db.kind === 'pglite') {
      running.ownerChannel = await startOwnerChannel(ops, log, ownerChannelPath(config.dataDir));
    }
    running.background = await startBackgroundWork(rt, roles, log);
    if (!roles.worker && rt.db.kind === 'pglite') {
      log.warn(
        'serve runs the API only, and with the embedded database no `pricehound worker` can run beside it: no listing will be checked on schedule; use `pricehound start`',
      );
    }
    if (roles.api) {
      const app = await buildApp(rt as Runtime, { logger: log });
      running.app = app;
      // A keep-alive connection whose request was already in progress when we began to stop is
      // closed after its response, rather than lingering until the timeout.
      app.addHook('onSend', (_request, reply, payload, done) => {
        if (stopping) reply.header('connection', 'close');
        done(null, payload);
      });
      await app.listen({ port: config.port, host: config.host });
    }
  } catch (err) {
    await running.background?.stop(0).catch(() => undefined);
    await running.app?.close().catch(() => undefined);
    await running.ownerChannel?.close().catch(() => undefined);
    await rt.close();
    throw err;
  }
  log.info(
    {
      ms: Date.now() - started,
      database: rt.db.kind,
      redis: roles.api ? Boolean(config.redisUrl) : undefined,
      owner_channel: running.ownerChannel?.socketPath,
      api: roles.api,
      // The check worker's id and concurrency (its task in src/jobs/tasks.ts says so); false without one.
      worker: false,
      ...running.background.ready,
    },
    roles.api ? 'pricehound ready' : 'pricehound worker ready',
  );

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    shutdown(running, config, log, signal).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const address = running.app?.server.address();
  return {
    operations: ops,
    url:
      address && typeof address === 'object'
        ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
        : undefined,
  };
}

async function shutdown(
  { app, ownerChannel, rt, background }: Running,
  config: Config,
  log: pino.Logger,
  signal: NodeJS.Signals,
): Promise<void> {
  // Closing the listener first makes new connections fail at once (Fastify's close, below, does
  // it too, but only after its hooks have run).
  app?.server.close();
  log.info(
    { signal, timeout_ms: config.shutdownTimeoutMs },
    app
      ? 'shutting down: no new connections; finishing requests in progress'
      : 'shutting down: finishing checks in progress',
  );

  const cut = setTimeout(() => {
    log.warn('shutdown timeout: cutting the connections still open');
    app?.server.closeAllConnections();
    ownerChannel?.closeAllConnections();
  }, config.shutdownTimeoutMs);
  const deadline = setTimeout(() => {
    log.error('shutdown did not finish in time: exiting anyway');
    process.exit(1);
  }, config.shutdownTimeoutMs + CLOSE_GRACE_MS);
  deadline.unref();

  // Background work gets the same timeout: the worker's checks still running then are abandoned
  // and their listings given back for another worker (or the next start) to check.
  await Promise.all([app?.close(), ownerChannel?.close(), background?.stop(config.shutdownTimeoutMs)]);
  clearTimeout(cut);
  await rt.close(); // flushes usage counts, closes the database and releases DATA_DIR
  clearTimeout(deadline);
  log.info('stopped');
}
