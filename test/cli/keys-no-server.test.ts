import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KeyView } from '../../src/owner-channel/operations.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { cli, createKeyWithCli, lines } from './helpers/cli.js';

const KEY = /^ph_live_[A-Za-z0-9_-]{43}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function get(server: ServerProcess, key: string) {
  return fetch(`${server.url}/api/v1/products`, { headers: { authorization: `Bearer ${key}` } });
}

describe('pricehound keys, with no server running', () => {
  let storage: TestStorage;
  before(async () => {
    storage = await testStorage();
  });
  after(async () => {
    await storage.cleanup();
  });

  it('creates, lists and revokes keys on the database directly; the server then honours them', async () => {
    const first = await createKeyWithCli(storage.env, ['--plan', 'starter', '--name', 'ci deploy']);
    assert.deepEqual(Object.keys(first).sort(), [
      'account_id',
      'created_at',
      'id',
      'key',
      'key_prefix',
      'name',
      'plan',
      'scope',
    ]);
    assert.match(first.key, KEY);
    assert.match(first.id, /^key_/);
    assert.match(first.account_id, /^acct_/);
    assert.equal(first.plan, 'starter');
    assert.equal(first.name, 'ci deploy');
    assert.match(first.created_at, RFC3339);
    assert.ok(first.key.startsWith(first.key_prefix));

    // --account adds a key to an existing account instead of making a new one.
    const second = await createKeyWithCli(storage.env, ['--plan', 'free', '--account', first.account_id]);
    assert.equal(second.account_id, first.account_id);

    // Without --json: the key alone on stdout, the details on stderr.
    const human = await cli(['keys', 'create', '--plan', 'business'], storage.env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^ph_live_[A-Za-z0-9_-]{43}\n$/);
    const details = /Created API key (key_\w+) \(plan business, scope full\) for new account (acct_\w+)\./.exec(
      human.stderr,
    );
    assert.ok(details, human.stderr);
    const third = { key: human.stdout.trim(), id: details[1]!, account: details[2]! };
    assert.notEqual(third.account, first.account_id);

    const byAccount = await cli(['keys', 'list', '--json', '--account', first.account_id], storage.env);
    assert.equal(byAccount.code, 0, byAccount.stderr);
    const keys = JSON.parse(byAccount.stdout) as KeyView[];
    assert.deepEqual(
      keys.map((k) => k.id),
      [first.id, second.id],
    );
    // Everything but the key itself.
    const { key: _key, ...shown } = first;
    assert.deepEqual(keys[0], { ...shown, revoked_at: null });

    const table = await cli(['keys', 'list'], storage.env);
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trimEnd().split('\n');
    assert.match(rows[0]!, /^ID\s+ACCOUNT\s+PLAN\s+SCOPE\s+NAME\s+PREFIX\s+CREATED\s+REVOKED$/);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s+/)[0]),
      [first.id, second.id, third.id],
    );
    for (const k of [first.key, second.key, third.key]) {
      assert.ok(!table.stdout.includes(k) && !byAccount.stdout.includes(k), 'keys list must never print a key');
    }

    const revoked = await cli(['keys', 'revoke', second.id, '--json'], storage.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match((JSON.parse(revoked.stdout) as KeyView).revoked_at ?? '', RFC3339);

    const server = await spawnServer(storage.env);
    try {
      const ok = await get(server, first.key);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('x-ratelimit-limit'), '10000');
      assert.equal((await get(server, third.key)).headers.get('x-ratelimit-limit'), '100000');
      assert.equal((await get(server, second.key)).status, 401);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  it('refuses an unknown account (exit 1) and an unknown plan (exit 2) with one line each', async () => {
    const [account, plan, missingPlan, unknownKey] = await Promise.all([
      cli(['keys', 'create', '--plan', 'free', '--account', 'acct_doesnotexist'], storage.env),
      cli(['keys', 'create', '--plan', 'gold'], storage.env),
      cli(['keys', 'create'], storage.env),
      cli(['keys', 'revoke', 'key_doesnotexist'], storage.env),
    ]);
    assert.equal(account.code, 1);
    assert.deepEqual(lines(account.stderr).length, 1);
    assert.match(account.stderr, /no account acct_doesnotexist/);
    assert.equal(account.stdout, '');

    assert.equal(plan.code, 2);
    assert.deepEqual(lines(plan.stderr).length, 1);
    assert.match(plan.stderr, /unknown plan "gold": use free\|starter\|business/);
    assert.equal(missingPlan.code, 2);
    assert.match(missingPlan.stderr, /--plan is required/);

    assert.equal(unknownKey.code, 1);
    assert.match(unknownKey.stderr, /no API key key_doesnotexist/);
  });
});
