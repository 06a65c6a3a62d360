// Creates a migrated PGlite data directory at argv[2] (used by scripts/run-tests.mjs).
import { migrate } from '../src/db/migrate.js';
import { openPglite } from '../src/db/pglite.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: make-test-template.ts DIR');
const db = await openPglite(dir);
await migrate(db);
await db.close();
