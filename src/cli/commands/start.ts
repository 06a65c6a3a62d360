import { loadConfigOrExit } from '../../config.js';
import type { Command } from '../command.js';
import { CliError, EXIT } from '../errors.js';
import type { Roles } from '../../server.js';

const ENVIRONMENT = `Configuration (environment variables; docs/OPERATIONS.md has all of them):
  PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), DATABASE_URL (unset: embedded database
  in DATA_DIR), REDIS_URL, LOG_LEVEL (info), SHUTDOWN_TIMEOUT_MS (10000),
  WORKER_CONCURRENCY (16), FETCH_* (docs/CONFIGURATION.md)

Logs are JSON lines on stdout. SIGTERM or SIGINT stops the process gracefully: it stops
accepting connections and claiming checks, finishes the requests and checks in progress (up to
SHUTDOWN_TIMEOUT_MS; checks still running then are given back for another worker), then
writes what it buffered and closes the database. Exit status: 0 after a clean stop, 1 when
start-up fails (the reason is one line on stderr), 2 for invalid configuration.
`;

function serverCommand(name: 'start' | 'serve' | 'worker', lead: string, roles: Roles): Command {
  return {
    name,
    positionals: [0, 0],
    options: {},
    help: `Usage: pricehound ${name}\n\n${lead}\n\n${ENVIRONMENT}`,
    async run() {
      const config = loadConfigOrExit();
      if (!roles.api && !config.databaseUrl) {
        throw new CliError(
          'the worker command needs DATABASE_URL: the embedded database in DATA_DIR can be opened by one process only, ' +
            'so a separate worker cannot reach it; run `pricehound start` instead, which runs the API and the worker together',
          EXIT.usage,
        );
      }
      const { startServer } = await import('../../server.js'); // Fastify and the rest: only for servers
      await startServer(config, roles);
      return 'running';
    },
  };
}

export const startCommand = serverCommand(
  'start',
  `Runs everything this installation needs in one process: the HTTP API and the worker that
checks listings on schedule (WORKER_CONCURRENCY checks at a time). Migrations are applied
first. This is the way to run with the embedded database.`,
  { api: true, worker: true },
);

export const serveCommand = serverCommand(
  'serve',
  `Runs the HTTP API alone, for deployments that run several API processes and separate
\`pricehound worker\` processes (with DATABASE_URL and REDIS_URL). Migrations are applied first.
With the embedded database nothing would check listings beside it: use \`start\`.`,
  { api: true, worker: false },
);

export const workerCommand = serverCommand(
  'worker',
  `Runs the worker that checks listings on schedule, without the HTTP API. Any number of
worker processes may run against one PostgreSQL database (DATABASE_URL): each claims due
listings with FOR UPDATE SKIP LOCKED, so no listing is checked by two at once, and a worker
that dies loses its claims after a lease of a minute. Migrations are applied first. Not
possible with the embedded database (exit status 2): only one process can open DATA_DIR,
so use \`pricehound start\` there.`,
  { api: false, worker: true },
);
