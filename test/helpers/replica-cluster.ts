import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL 15 primary and a streaming replica of it, each a cluster of its own (initdb,
 * pg_basebackup) on its own loopback port, for tests of DATABASE_READ_URL. The primary is ours
 * too (not the machine's PostgreSQL), so the test needs no replication rule in anyone else's
 * pg_hba.conf. As root the clusters run as the `postgres` user (PostgreSQL refuses root).
 */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why the clusters cannot be made here, or undefined when they can. */
export function replicaUnavailable(): string | undefined {
  for (const b of ['initdb', 'pg_ctl', 'pg_basebackup']) {
    if (!fs.existsSync(path.join(PG_BIN, b)))
      return `PostgreSQL 15 server binaries not found (${path.join(PG_BIN, b)}); set PG_BIN to their directory`;
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'running as root and there is no `postgres` user to run PostgreSQL as';
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ReplicaCluster {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops the replica (fast shutdown): it "goes away". */
  stopReplica(): void;
  /** Stops both and removes their files. */
  stop(): void;
}

export async function startReplicaCluster(): Promise<ReplicaCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-replica-'));
  const asRoot = process.getuid?.() === 0;
  const run = (bin: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : path.join(PG_BIN, bin);
    const argv = asRoot ? ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args] : args;
    return execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: root, timeout: 120_000 }).toString();
  };
  if (asRoot) execFileSync('chown', ['postgres', root]);
  fs.chmodSync(root, 0o755);
  const primary = path.join(root, 'primary');
  const replica = path.join(root, 'replica');
  const [p1, p2] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stopCluster = (dir: string) => {
    try {
      run('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']);
    } catch {
      // not running
    }
  };
  try {
    run('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    fs.appendFileSync(
      path.join(primary, 'postgresql.conf'),
      [
        `port = ${p1}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${root}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'fsync = off',
        'synchronous_commit = off',
        'shared_buffers = 16MB',
        'max_connections = 40',
        '',
      ].join('\n'),
    );
    fs.appendFileSync(path.join(primary, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    run('pg_ctl', ['-D', primary, '-l', path.join(root, 'primary.log'), '-w', '-t', '60', 'start']);
    started.push(primary);
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(p1),
      '-U',
      'postgres',
      '-D',
      replica,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    fs.appendFileSync(path.join(replica, 'postgresql.conf'), `port = ${p2}\nhot_standby = on\n`);
    run('pg_ctl', ['-D', replica, '-l', path.join(root, 'replica.log'), '-w', '-t', '60', 'start']);
    started.push(replica);
  } catch (err) {
    for (const d of started.reverse()) stopCluster(d);
    fs.rmSync(root, { recursive: true, force: true });
    const e = err as { stderr?: Buffer };
    throw new Error(`could not start the replica cluster: ${e.stderr?.toString() ?? String(err)}`, { cause: err });
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${p1}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${p2}/postgres`,
    stopReplica: () => stopCluster(replica),
    stop() {
      stopCluster(replica);
      stopCluster(primary);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
