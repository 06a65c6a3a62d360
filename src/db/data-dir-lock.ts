import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * PGlite is single-process: exactly one process may open a DATA_DIR. That process holds
 * `DATA_DIR/pricehound.lock` (its pid and the path of its owner channel's socket); any other process
 * (the CLI while the server runs) finds the owner there and talks to it over the socket.
 */
export interface LockInfo {
  pid: number;
  socket: string;
}

export class DataDirInUseError extends Error {
  constructor(readonly owner: LockInfo) {
    super(`DATA_DIR is in use by process ${owner.pid}`);
    this.name = 'DataDirInUseError';
  }
}

export function lockPath(dataDir: string): string {
  return path.join(dataDir, 'pricehound.lock');
}

/** Unix socket paths are limited to ~107 bytes; long DATA_DIRs get one under the temp dir. */
export function ownerChannelPath(dataDir: string): string {
  const inDir = path.join(dataDir, 'pricehound.sock');
  if (Buffer.byteLength(inDir) <= 100) return inDir;
  const hash = crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `pricehound-${hash}.sock`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of `dataDir`, or undefined when nobody holds it (a stale lock is ignored). */
export function readOwner(dataDir: string): LockInfo | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockPath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    if (Number.isInteger(info.pid) && info.pid !== process.pid && alive(info.pid)) return info;
  } catch {
    // a torn or foreign file is treated as stale
  }
  return undefined;
}

/** Take the lock or throw DataDirInUseError. Returns the release function. */
export function acquireDataDirLock(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = lockPath(dataDir);
  const info: LockInfo = { pid: process.pid, socket: ownerChannelPath(dataDir) };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(info), { flag: 'wx', mode: 0o600 });
      const release = () => {
        try {
          const current = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
          if (current.pid === process.pid) fs.unlinkSync(file);
        } catch {
          // already gone
        }
      };
      process.once('exit', release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(dataDir);
      if (owner) throw new DataDirInUseError(owner);
      fs.rmSync(file, { force: true }); // stale: its process is gone (e.g. kill -9)
    }
  }
  throw new Error(`could not take ${file}`);
}
