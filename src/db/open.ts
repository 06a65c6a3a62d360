import path from 'node:path';
import type { Config } from '../config.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import type { Database } from './types.js';

/**
 * Opens the configured database: PostgreSQL when DATABASE_URL is set, otherwise PGlite in
 * DATA_DIR (taking the single-owner lock first; throws DataDirInUseError if another process has it).
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & { databasePoolSize?: number; embeddedSharedBuffersMb?: number },
  opts: { onIdleError?: (err: Error) => void; applicationName?: string } = {},
): Promise<Database> {
  if (config.databaseUrl) {
    return openPostgres(config.databaseUrl, { poolSize: config.databasePoolSize, ...opts });
  }
  const release = acquireDataDirLock(config.dataDir);
  try {
    const db = await openPglite(path.join(config.dataDir, 'pgdata'), {
      sharedBuffersMb: config.embeddedSharedBuffersMb,
    });
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
