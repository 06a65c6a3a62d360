// Migrates a test template (used by scripts/run-tests.mjs): a PGlite data directory at argv[2],
// or, when argv[2] is a postgres:// URL, that (empty) PostgreSQL database.
import { migrate } from '../src/db/migrate.js';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';

const target = process.argv[2];
if (!target) throw new Error('usage: make-test-template.ts DIR|postgres://URL');
const db = /^postgres(ql)?:/.test(target) ? await openPostgres(target, { poolSize: 1 }) : await openPglite(target);
await migrate(db);
await db.close();
