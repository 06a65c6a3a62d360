import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readMigrations } from '../../src/db/migrate.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { spawnServer } from '../helpers/server-process.js';
import { cli } from './helpers/cli.js';

describe('pricehound migrate', () => {
  let storage: TestStorage;
  before(async () => {
    // An empty database: the templates the tests start from are migrated already.
    storage = await testStorage({ migrated: false });
  });
  after(async () => {
    await storage.cleanup();
  });

  it('applies every migration once, then finds nothing to do, also while the server runs', async () => {
    const all = readMigrations().map((m) => m.name);
    assert.ok(all.length > 0);

    const first = await cli(['migrate', '--json'], storage.env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { applied: all });

    const again = await cli(['migrate'], storage.env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'The database is up to date: no migrations to apply.\n');

    const server = await spawnServer(storage.env);
    try {
      assert.ok(!server.logs.some((l) => l.msg === 'migrations applied'), 'the server found nothing to migrate');
      const live = await cli(['migrate', '--json'], storage.env);
      assert.equal(live.code, 0, live.stderr);
      assert.deepEqual(JSON.parse(live.stdout), { applied: [] });
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});
