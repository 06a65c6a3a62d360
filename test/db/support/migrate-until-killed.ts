/**
 * A process to be killed in the middle of a migration (test/db/support/populated.ts,
 * `killMidMigration`): opens the database of its environment (DATA_DIR or DATABASE_URL) and
 * applies every pending migration, as a server does when it starts. The test kills it with
 * SIGKILL once the migration is under way: no chance to roll back or close anything.
 * Prints `migrating` before and `migrated` after, so a run that was not killed in time shows.
 */
import { loadConfig } from '../../../src/config.js';
import { migrate } from '../../../src/db/migrate.js';
import { openDatabase } from '../../../src/db/open.js';

const db = await openDatabase(loadConfig(process.env), { applicationName: process.env.APPLICATION_NAME });
process.stdout.write('migrating\n');
await migrate(db);
process.stdout.write('migrated\n');
await db.close();
