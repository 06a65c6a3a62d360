import { setTimeout as delay } from 'node:timers/promises';
import type { OwnerOperations } from '../owner-channel/operations.js';
import { OwnerChannelUnreachableError, probeOwnerChannel, channelOperations } from '../owner-channel/client.js';
import type { Config } from '../config.js';
import { DataDirInUseError, readOwner } from '../db/data-dir-lock.js';
import { CliError } from './errors.js';

/** Opens the database in this process. Loaded on demand: talking to a server needs no driver. */
async function openDirect(config: Config): Promise<OwnerOperations> {
  const [{ openDatabase }, { localOperations }] = await Promise.all([import('../db/open.js'), import('../owner-channel/local.js')]);
  const db = config.databaseUrl
    ? await openDatabase({ ...config, databasePoolSize: 2 }, { applicationName: 'pricehound-cli' })
    : await openDatabase(config);
  return localOperations(db, { ownsDb: true });
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
