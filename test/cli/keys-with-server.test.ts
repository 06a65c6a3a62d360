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

describe('pricehound keys, while the server runs', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
  });

  it('creates a key the server accepts at once, lists it, and revokes it for the very next request', async () => {
    const k = await createKeyWithCli(storage.env, ['--plan', 'business', '--name', 'live']);
    assert.match(k.key, KEY);
    if (storage.kind === 'pglite') {
      // The server owns DATA_DIR, so the CLI went through its owner channel.
      await server.waitForLog((l) => l.msg === 'owner channel: api key created' && l.key_id === k.id);
    }
    const first = await get(server, k.key);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-limit'), '100000');
    // A second request is answered from the server's key cache.
    assert.equal((await get(server, k.key)).status, 200);

    const listed = await cli(['keys', 'list', '--json', '--account', k.account_id], storage.env);
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as KeyView[];
    assert.deepEqual(
      keys.map((x) => [x.id, x.name, x.revoked_at]),
      [[k.id, 'live', null]],
    );
    assert.ok(!listed.stdout.includes(k.key));

    const revoked = await cli(['keys', 'revoke', k.id], storage.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    const revokedAt = new RegExp(`^Revoked ${k.id} \\(account ${k.account_id}\\) at (\\S+)\\.$`, 'm').exec(
      revoked.stdout,
    )?.[1];
    assert.match(revokedAt ?? '', RFC3339);
    const refused = await get(server, k.key);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/);

    // Revoking again changes nothing (the first revocation time stays) and still succeeds.
    const again = await cli(['keys', 'revoke', k.id, '--json'], storage.env);
    assert.equal(again.code, 0);
    assert.equal((JSON.parse(again.stdout) as KeyView).revoked_at, revokedAt);
  });

  it('reports an unknown account through the server as exit 1', async () => {
    const r = await cli(['keys', 'create', '--plan', 'free', '--account', 'acct_doesnotexist', '--json'], storage.env);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(lines(r.stderr).length, 1);
    assert.match(r.stderr, /no account acct_doesnotexist/);
  });
});
