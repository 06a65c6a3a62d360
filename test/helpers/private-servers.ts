import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';

/**
 * A PostgreSQL 15 cluster and a Redis of a test's own, on free loopback ports in a temp dir, that
 * the test may really stop and start again (same port, same data), so the shared servers on 5432
 * and 6379 are never touched (issue 12, docs/RELIABILITY.md "Faults"). Not a test file itself.
 *
 * PostgreSQL refuses to run as root: when the tests run as root, initdb and pg_ctl run as the
 * `postgres` OS user (runuser), in a temp dir that user owns. Settings are for speed only
 * (fsync off: the machine does not crash, only the server stops); synchronous_commit stays on, so
 * an immediate stop loses nothing that was committed.
 */

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';
const exec = promisify(execFile);

/** Why the private servers cannot be had here (a binary or the postgres user missing), or undefined. */
export function privateServersMissing(): string | undefined {
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) {
    if (!fs.existsSync(path.join(PG_BIN, bin)))
      return `no ${path.join(PG_BIN, bin)} (PostgreSQL 15 server binaries; set PG_BIN)`;
  }
  if (spawnSync(REDIS_SERVER, ['--version']).status !== 0) return `no ${REDIS_SERVER} on PATH (set REDIS_SERVER)`;
  if (isRoot() && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'running as root without a postgres OS user to run PostgreSQL as';
  return undefined;
}

/** Starting failed: the tests that need the servers skip with this as the reason. */
export class PrivateServersUnavailable extends Error {}

export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  url: string;
  /** `pg_ctl stop -m immediate` (a crash for the clients: connections cut, recovery at the next start), or 'fast'. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** Starts it again on the same port and data dir; resolves once it accepts connections. */
  start(): Promise<void>;
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL (nothing saved: it comes back empty), or 'SIGTERM' for a clean shutdown. */
  stop(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
}

export interface PrivateServers {
  dir: string;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  /** Stops both and removes the temp dir; safe to call more than once. */
  cleanup(): Promise<void>;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** [file, args] that runs `bin args` as the postgres user when we are root. */
function asPostgres(bin: string, args: string[]): [string, string[]] {
  const full = path.join(PG_BIN, bin);
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
}

async function runPg(bin: string, args: string[], timeoutMs = 60_000): Promise<void> {
  const [file, argv] = asPostgres(bin, args);
  try {
    await exec(file, argv, { timeout: timeoutMs });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')}: ${(e.stderr || e.stdout || e.message).trim()}`, { cause: err });
  }
}

/** Everything started and not yet cleaned up, stopped synchronously if the test process exits first. */
const live = new Set<() => void>();
process.once('exit', () => {
  for (const kill of live) kill();
});

export async function startPrivateServers(): Promise<PrivateServers> {
  const missing = privateServersMissing();
  if (missing) throw new PrivateServersUnavailable(missing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-servers-'));
  const data = path.join(dir, 'pgdata');
  const pgLog = path.join(dir, 'postgres.log');
  let redisProc: ChildProcess | undefined;
  let pgRunning = false;

  const killNow = () => {
    redisProc?.kill('SIGKILL');
    if (pgRunning) {
      const [file, argv] = asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      spawnSync(file, argv, { stdio: 'ignore', timeout: 10_000 });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  live.add(killNow);

  const pgPort = await freePort();
  const postgres: PrivatePostgres = {
    port: pgPort,
    url: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
    async stop(mode = 'immediate') {
      await runPg('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      pgRunning = false;
    },
    async start() {
      pgRunning = true; // from here on cleanup tries to stop it, even if waiting fails
      try {
        await runPg('pg_ctl', ['-D', data, '-l', pgLog, '-w', '-t', '60', 'start'], 70_000);
      } catch (err) {
        const log = fs.existsSync(pgLog) ? fs.readFileSync(pgLog, 'utf8').split('\n').slice(-10).join('\n') : '';
        throw new Error(`${(err as Error).message}\n${log}`, { cause: err });
      }
    },
  };

  const redisPort = await freePort();
  const redis: PrivateRedis = {
    port: redisPort,
    url: `redis://127.0.0.1:${redisPort}`,
    async stop(signal = 'SIGKILL') {
      const p = redisProc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = once(p, 'exit');
      p.kill(signal);
      await exited;
      redisProc = undefined;
    },
    async start() {
      const p = spawn(
        REDIS_SERVER,
        [
          '--port',
          String(redisPort),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          '--dir',
          dir,
          '--loglevel',
          'notice',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      redisProc = p;
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`redis-server did not start within 20 s: ${lines.slice(-5).join('\n')}`)),
          20_000,
        );
        const done = (err?: Error) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        };
        readline.createInterface({ input: p.stdout! }).on('line', (line) => {
          lines.push(line);
          if (line.includes('Ready to accept connections')) done();
        });
        p.on('error', done);
        p.on('exit', (code, sig) =>
          done(new Error(`redis-server exited (${code ?? sig}) before it was ready: ${lines.slice(-5).join('\n')}`)),
        );
      });
      p.stderr!.resume();
    },
  };

  const cleanup = async () => {
    if (!live.has(killNow)) return;
    live.delete(killNow);
    await redis.stop().catch(() => undefined);
    if (pgRunning) await postgres.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    if (isRoot()) {
      const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
      fs.chownSync(dir, uid, gid);
    }
    await runPg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    fs.appendFileSync(
      path.join(data, 'postgresql.conf'),
      [
        '',
        '# private test cluster (test/helpers/private-servers.ts)',
        `port = ${pgPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'fsync = off',
        'full_page_writes = off',
        'shared_buffers = 32MB',
        'max_connections = 60',
        '',
      ].join('\n'),
    );
    await Promise.all([postgres.start(), redis.start()]);
  } catch (err) {
    await cleanup();
    throw new PrivateServersUnavailable(`could not start a private PostgreSQL and Redis: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { dir, postgres, redis, cleanup };
}
