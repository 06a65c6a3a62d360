/**
 * A process killed in the middle of a migration (test/db/partitions-migration.test.ts): opens the
 * database of its environment (DATA_DIR or DATABASE_URL), starts the pending migrations and
 * SIGKILLs itself KILL_AFTER_MS later, with no chance to roll back or close anything.
 */
import { loadConfig } from '../../../src/config.js';
import { migrate } from '../../../src/db/migrate.js';
import { openDatabase } from '../../../src/db/open.js';

const db = await openDatabase(loadConfig(process.env), { applicationName: 'ph-migrate-and-die' });
const after = Number(process.env.KILL_AFTER_MS ?? '500');
process.stdout.write('migrating\n');
setTimeout(() => process.kill(process.pid, 'SIGKILL'), after);
await migrate(db);
process.stdout.write('migrated\n');
await db.close();
